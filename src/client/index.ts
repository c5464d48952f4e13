// `mnemo/client`: the TypeScript client and the webhook signature checks a receiver needs.
export { createMnemoClient, type MnemoClient, type MnemoClientOptions, type QueryOf, type RequestBody } from './mnemo-client.ts';
export { MnemoError } from './mnemo-error.ts';
export type { EventStream, EventStreamOptions, MnemoEvent } from './event-stream.ts';
export type { FetchFunction, RetryOptions } from './retrying-fetch.ts';
export { verifyMemoryEventSignature, verifyMnemoSignature, WebhookVerificationError } from './webhook-receiver.ts';
export type { paths as MnemoPaths, components as MnemoComponents } from './openapi-types.ts';
