// Holds the one State and tells subscribers (the renderers) when a transition changed it.
import { initialState, type State } from "./model.ts";

export type Transition = (state: State) => State;

export function createStore(initial: State = initialState()) {
  let state = initial;
  const listeners = new Set<(state: State, previous: State) => void>();
  return {
    get(): State {
      return state;
    },
    apply(transition: Transition): State {
      const previous = state;
      state = transition(state);
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
