import type { CallbackManagerForRetrieverRun } from '@langchain/core/callbacks/manager';
import { Document } from '@langchain/core/documents';
import { BaseRetriever, type BaseRetrieverInput } from '@langchain/core/retrievers';
import type { MnemoClient } from 'mnemo/client';

export interface MnemoRetrieverInput extends BaseRetrieverInput {
  client: MnemoClient;
  /** How many memories to return (1-100, default 4). */
  k?: number;
  /** `hybrid` (default: semantic and keyword evidence, G3 /hybrid) or `semantic` (G1 search). */
  mode?: 'hybrid' | 'semantic';
  /** The lowest calibrated similarity (semantic) or relevance (hybrid) kept, 0-1 (Mnemo's default 0.7: relevant). */
  threshold?: number;
}

/**
 * A LangChain retriever over Mnemo's memories: each hit is a Document whose pageContent is the memory's content and
 * whose metadata holds its id, title, score and the memory's own metadata.
 */
export class MnemoRetriever extends BaseRetriever {
  static override lc_name() {
    return 'MnemoRetriever';
  }
  override lc_namespace = ['mnemo', 'retrievers'];
  private readonly client: MnemoClient;
  private readonly k: number;
  private readonly mode: 'hybrid' | 'semantic';
  private readonly threshold: number | undefined;

  constructor(fields: MnemoRetrieverInput) {
    super(fields);
    this.client = fields.client;
    this.k = fields.k ?? 4;
    this.mode = fields.mode ?? 'hybrid';
    this.threshold = fields.threshold;
  }

  override async _getRelevantDocuments(query: string, _runManager?: CallbackManagerForRetrieverRun): Promise<Document[]> {
    const threshold = this.threshold === undefined ? {} : { threshold: this.threshold };
    if (this.mode === 'semantic') {
      const found = await this.client.memories.search({ query, limit: this.k, ...threshold });
      return found.data.results.map((m) => new Document({
        id: m.id,
        pageContent: m.content,
        metadata: { ...m.metadata, id: m.id, title: m.title, tags: m.tags, memory_type: m.memory_type, score: m.similarity_score },
      }));
    }
    const found = await this.client.memories.hybrid({ query, topK: this.k, ...threshold });
    return found.matches.map((m) => new Document({
      id: m.id,
      pageContent: m.text,
      metadata: { ...m.metadata, id: m.id, title: m.title, score: m.score },
    }));
  }
}
