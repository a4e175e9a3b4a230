import {
  describeWatcher,
  startWatcherIfEnabled,
  watcherOf
} from "./chunk-OD4ZBXGH.js";
import "./chunk-ETUFDOJ7.js";
import "./chunk-QGQYMC3H.js";
import "./chunk-K7T5KA4E.js";
import "./chunk-BNPLH5UU.js";
export {
  describeWatcher,
  startWatcherIfEnabled,
  watcherOf
};
