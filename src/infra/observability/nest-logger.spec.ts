import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { PinoNestLogger } from './nest-logger.js';
import { runInRequest } from '../../domain/shared/request-scope.js';

function capture(level = 'info') {
  const records: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      records.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level }, stream), records };
}

describe(PinoNestLogger.name, () => {
  it('writes the message with the context Nest passes last, at the matching level', () => {
    const { logger, records } = capture('debug');
    const sut = new PinoNestLogger(logger);
    sut.log('started', 'Boot');
    sut.warn('careful', 'Boot');
    sut.debug('detail', 'Boot');
    sut.verbose('too fine', 'Boot');
    expect(records.map(({ level, msg, context }) => ({ level, msg, context }))).toEqual([
      { level: 30, msg: 'started', context: 'Boot' },
      { level: 40, msg: 'careful', context: 'Boot' },
      { level: 20, msg: 'detail', context: 'Boot' },
    ]);
  });

  it('writes Nest’s own progress lines (modules, routes) at debug', () => {
    const { logger, records } = capture('debug');
    const sut = new PinoNestLogger(logger);
    sut.log('AppModule dependencies initialized', 'InstanceLoader');
    sut.log('Mapped {/v1/me, GET} route', 'RouterExplorer');
    sut.warn('a framework warning', 'NestApplication');
    expect(records.map(({ level, context }) => ({ level, context }))).toEqual([
      { level: 20, context: 'InstanceLoader' },
      { level: 20, context: 'RouterExplorer' },
      { level: 40, context: 'NestApplication' },
    ]);
  });

  it(
    'keeps extra arguments in the message, an Error as err, an object as fields, and the exception ' +
      'handlers’ stack',
    () => {
      const { logger, records } = capture();
      const sut = new PinoNestLogger(logger);
      sut.log('a', 'b', 'Ctx');
      sut.error(new Error('boom'), 'Ctx');
      sut.log({ event: 'reload', skills: 3 }, 'Ctx');
      sut.error('Unhandled', 'Error: x\n    at f (file.js:1:1)', 'ExceptionsHandler');
      sut.log('no context');
      expect(records[0]).toMatchObject({ msg: 'a b', context: 'Ctx' });
      expect(records[1]).toMatchObject({ msg: 'boom', context: 'Ctx', err: { type: 'Error', message: 'boom' } });
      expect(records[2]).toMatchObject({ event: 'reload', skills: 3, context: 'Ctx' });
      expect(records[3]).toMatchObject({
        msg: 'Unhandled',
        context: 'ExceptionsHandler',
        err: { stack: 'Error: x\n    at f (file.js:1:1)' },
      });
      expect(records[4]).toMatchObject({ msg: 'no context' });
      expect(records[4]).not.toHaveProperty('context');
    },
  );

  it('inside a request writes through that request’s logger (its reqId), outside through the root', async () => {
    const { logger, records } = capture();
    const sut = new PinoNestLogger(logger);
    await new Promise<void>((resolve) =>
      runInRequest({ id: 'r-1', log: logger.child({ reqId: 'r-1' }) }, () => {
        void Promise.resolve().then(() => {
          sut.log('in a request', 'Svc');
          resolve();
        });
      }),
    );
    sut.log('outside', 'Svc');
    expect(records.map(({ msg, reqId }) => ({ msg, reqId }))).toEqual([
      { msg: 'in a request', reqId: 'r-1' },
      { msg: 'outside', reqId: undefined },
    ]);
  });
});
