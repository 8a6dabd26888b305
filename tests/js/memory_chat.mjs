// The AI SDK's chat (the `ai` package's AbstractChat, which useChat wraps)
// with its state in memory, as the Node scripts of these tests drive it.
import { AbstractChat } from "ai";

class MemoryState {
  constructor() { this.status = "ready"; this.error = undefined; this.messages = []; }
  pushMessage(message) { this.messages = [...this.messages, message]; }
  popMessage() { this.messages = this.messages.slice(0, -1); }
  replaceMessage(index, message) {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
  }
  snapshot(thing) { return structuredClone(thing); }
}

export class Chat extends AbstractChat {
  constructor(init) { super({ ...init, state: new MemoryState() }); }
}
