import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import {
  mapChatMessagesToStoredMessages, mapStoredMessagesToChatMessages, type BaseMessage, type StoredMessage,
} from '@langchain/core/messages';
import type { MnemoClient } from 'mnemo/client';

/** The memory type of a stored chat message. */
export const CHAT_MESSAGE_TYPE = 'chat_message';
/** The tag that groups one session's messages: listing by it, oldest first, gives the conversation in order. */
export const sessionTag = (sessionId: string): string => `chat-session:${sessionId}`;
const PAGE = 100;

export interface MnemoChatMessageHistoryInput {
  client: MnemoClient;
  /** 1-87 characters without a comma (the session tag is at most 100 characters, and lists split tags on commas). */
  sessionId: string;
}

/**
 * A LangChain chat message history kept in Mnemo: each message is one memory of type `chat_message`, tagged
 * `chat-session:<sessionId>`, whose content is the message's text (searchable like any memory) and whose metadata
 * holds the whole message as LangChain stores it (`metadata.message`). A session reads back oldest first: Mnemo lists
 * by creation time and breaks ties by insertion order, and messages are written one after another.
 */
export class MnemoChatMessageHistory extends BaseListChatMessageHistory {
  override lc_namespace = ['mnemo', 'chat_history'];
  private readonly client: MnemoClient;
  readonly sessionId: string;

  constructor(fields: MnemoChatMessageHistoryInput) {
    super(fields);
    if (!/^[^,]{1,87}$/.test(fields.sessionId) || !fields.sessionId.trim()) {
      throw new TypeError('sessionId must be 1-87 characters without a comma');
    }
    this.client = fields.client;
    this.sessionId = fields.sessionId;
  }

  async getMessages(): Promise<BaseMessage[]> {
    const stored: StoredMessage[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const page = await this.client.memories.list({ tags: sessionTag(this.sessionId), type: CHAT_MESSAGE_TYPE, sortBy: 'created_at', sortOrder: 'asc', limit: PAGE, offset });
      for (const memory of page.data) stored.push((memory.metadata as { message: StoredMessage }).message);
      if (!page.pagination.hasMore) return mapStoredMessagesToChatMessages(stored);
    }
  }

  async addMessage(message: BaseMessage): Promise<void> {
    const [stored] = mapChatMessagesToStoredMessages([message]);
    const text = message.text.trim();
    await this.client.memories.create({
      title: `${message.type} message in ${this.sessionId}`.slice(0, 255),
      // A message without text (a tool call alone) still needs content: Mnemo refuses blank content.
      content: text || `(${message.type} message without text)`,
      memory_type: CHAT_MESSAGE_TYPE,
      tags: [sessionTag(this.sessionId)],
      metadata: { session_id: this.sessionId, message: stored },
    });
  }

  /** One after another, so that the order of creation is the order of the conversation. */
  override async addMessages(messages: BaseMessage[]): Promise<void> {
    for (const message of messages) await this.addMessage(message);
  }

  override async clear(): Promise<void> {
    for (const id of await this.messageIds()) await this.client.memories.delete(id);
  }

  private async messageIds(): Promise<string[]> {
    const ids: string[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const page = await this.client.memories.list({ tags: sessionTag(this.sessionId), type: CHAT_MESSAGE_TYPE, limit: PAGE, offset });
      ids.push(...page.data.map((m) => m.id));
      if (!page.pagination.hasMore) return ids;
    }
  }
}
