import {
  describeWatcher,
  startWatcherIfEnabled,
  watcherOf
} from "./chunk-ZY26KJQV.js";
import "./chunk-44YBB7XF.js";
import "./chunk-LPW2V2WV.js";
import "./chunk-KGLR27D7.js";
import "./chunk-BNPLH5UU.js";
export {
  describeWatcher,
  startWatcherIfEnabled,
  watcherOf
};
