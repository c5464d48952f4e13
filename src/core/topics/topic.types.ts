import type { Metadata } from '../memories/memory.types.ts';
import type { Scope } from '../scope.ts';

/** A topic groups memories (a memory's `topic_id`); topics may nest under a parent. */
export interface Topic {
  id: string;
  scope: Scope;
  name: string;
  description: string | null;
  parentId: string | null;
  metadata: Metadata;
  createdAt: Date;
  updatedAt: Date;
  createdBy: string;
}

export interface NewTopicInput {
  name: string;
  description?: string | null | undefined;
  parentId?: string | null | undefined;
  metadata?: Metadata | undefined;
}

export interface TopicPatch {
  name?: string | undefined;
  description?: string | null | undefined;
  parentId?: string | null | undefined;
  metadata?: Metadata | undefined;
}

export const MAX_TOPIC_NAME = 255;
export const MAX_TOPIC_DESCRIPTION = 2000;
