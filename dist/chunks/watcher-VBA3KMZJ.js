import {
  describeWatcher,
  startWatcherIfEnabled,
  watcherOf
} from "./chunk-G5RARRQU.js";
import "./chunk-44YBB7XF.js";
import "./chunk-MCUY5J2Q.js";
import "./chunk-E2TQSZPH.js";
import "./chunk-BNPLH5UU.js";
export {
  describeWatcher,
  startWatcherIfEnabled,
  watcherOf
};
