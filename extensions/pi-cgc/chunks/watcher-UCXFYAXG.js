import {
  describeWatcher,
  startWatcherIfEnabled,
  watcherOf
} from "./chunk-JXE34AG3.js";
import "./chunk-DIDPKZI7.js";
import "./chunk-EM356YHV.js";
import "./chunk-K7T5KA4E.js";
import "./chunk-AN223M6Q.js";
export {
  describeWatcher,
  startWatcherIfEnabled,
  watcherOf
};
