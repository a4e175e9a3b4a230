// The engine's answer to a `possible` request (engine/pi_cgc_engine/serve.py): the call sites of a function's
// name that its rules (engine/pi_cgc_engine/possible_calls.py) cannot rule out. One definition, below the two
// features that use it: the engine's client (freshness/engine.ts) and the graph tools (agent/possible-callers.ts).

/** A function whose possible callers are asked for: its path as the graph stores it, its name, its line. */
export interface PossibleTarget {
  path: string;
  name: string;
  line: number;
}

/** A call site of a target's name that the engine's rules cannot rule out. */
export interface PossibleSite {
  path: string;
  line: number;
  /** The function around the call, or `<module>` (callerLine 0) at module level. */
  caller: string;
  callerLine: number;
  rule: string;
  /** Why the call may be the target's, in words. */
  why: string;
  /** 0: a rule that names the target's class or module; 1: a call on an object of unknown type; 2: the same for an override, listed only where nothing else is. */
  rank: number;
}
