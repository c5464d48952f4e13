// `mnemo/integrations/langchain`: a retriever and a chat message history over Mnemo, for LangChain.js.
export { MnemoRetriever, type MnemoRetrieverInput } from './mnemo-retriever.ts';
export { CHAT_MESSAGE_TYPE, MnemoChatMessageHistory, sessionTag, type MnemoChatMessageHistoryInput } from './mnemo-chat-history.ts';
