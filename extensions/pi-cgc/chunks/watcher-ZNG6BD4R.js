import {
  describeWatcher,
  startWatcherIfEnabled,
  watcherOf
} from "./chunk-6W653PZK.js";
import "./chunk-ENJUY6A2.js";
import "./chunk-EM356YHV.js";
import "./chunk-K7T5KA4E.js";
import "./chunk-AN223M6Q.js";
export {
  describeWatcher,
  startWatcherIfEnabled,
  watcherOf
};
