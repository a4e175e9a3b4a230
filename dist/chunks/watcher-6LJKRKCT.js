import {
  describeWatcher,
  startWatcherIfEnabled,
  watcherOf
} from "./chunk-AIWCFYPL.js";
import "./chunk-ULSSXASY.js";
import "./chunk-MCUY5J2Q.js";
import "./chunk-E2TQSZPH.js";
import "./chunk-BNPLH5UU.js";
export {
  describeWatcher,
  startWatcherIfEnabled,
  watcherOf
};
