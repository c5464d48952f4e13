// `mnemo/integrations/vercel-ai`: memory tools for the Vercel AI SDK.
export { mnemoTools, type MnemoToolsOptions } from './mnemo-tools.ts';
