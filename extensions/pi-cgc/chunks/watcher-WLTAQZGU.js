import {
  describeWatcher,
  startWatcherIfEnabled,
  watcherOf
} from "./chunk-N2SMOQGM.js";
import "./chunk-F77Q226V.js";
import "./chunk-EM356YHV.js";
import "./chunk-K7T5KA4E.js";
import "./chunk-AN223M6Q.js";
export {
  describeWatcher,
  startWatcherIfEnabled,
  watcherOf
};
