import { Global, Injectable, Module } from '@nestjs/common';

/**
 * Where the process is in its life, for everything that must act differently while it stops:
 * readiness reports not-ready, new turns are refused, turns in flight are awaited.
 */
@Injectable()
export class LifecycleService {
  private shuttingDown = false;

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  beginShutdown(): void {
    this.shuttingDown = true;
  }
}

@Global()
@Module({ providers: [LifecycleService], exports: [LifecycleService] })
export class LifecycleModule {}
