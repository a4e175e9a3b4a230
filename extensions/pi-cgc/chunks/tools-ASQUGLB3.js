import {
  answer,
  cypherRows,
  graphTools
} from "./chunk-55QXXSJE.js";
import "./chunk-FAONAULB.js";
import "./chunk-U43P4R4X.js";
import "./chunk-QGQYMC3H.js";
import "./chunk-K7T5KA4E.js";
import "./chunk-BNPLH5UU.js";
export {
  answer,
  cypherRows,
  graphTools
};
