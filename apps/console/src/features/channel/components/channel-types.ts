import type { OperationOutput, Operations } from '@ukiyo/contract';

export type ChannelView = OperationOutput<Operations['channel.list']>['channels'][number];
