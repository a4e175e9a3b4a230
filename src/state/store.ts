// Holds the one State and tells subscribers (the renderers) when a transition changed it.
import { initialState, type State } from "./model.ts";

/** A transition of the model; the store hands it the time, so the model itself reads no clock. */
export type Transition = (state: State, now: number) => State;

export function createStore(initial: State = initialState(), clock: () => number = Date.now) {
  let state = initial;
  const listeners = new Set<(state: State, previous: State) => void>();
  return {
    get(): State {
      return state;
    },
    apply(transition: Transition): State {
      const previous = state;
      state = transition(state, clock());
      if (state !== previous) for (const listener of listeners) listener(state, previous);
      return state;
    },
    subscribe(listener: (state: State, previous: State) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

export type Store = ReturnType<typeof createStore>;
