import { Reflector } from '@nestjs/core';

/** A route no rate limit applies to (health probes: an orchestrator must always get an answer). */
export const NotRateLimited = Reflector.createDecorator<true>({ transform: () => true });

/** A route or resolver that runs a chat turn: it counts against `turns_per_minute` as well. */
export const CountsAsTurn = Reflector.createDecorator<true>({ transform: () => true });
