import {
  answer,
  cypherRows,
  graphTools
} from "./chunk-CFPUVDRS.js";
import "./chunk-QWBAJ4R4.js";
import "./chunk-U43P4R4X.js";
import "./chunk-EM356YHV.js";
import "./chunk-K7T5KA4E.js";
import "./chunk-AN223M6Q.js";
export {
  answer,
  cypherRows,
  graphTools
};
