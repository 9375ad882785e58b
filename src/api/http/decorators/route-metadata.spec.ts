import { describe, expect, it } from '@jest/globals';
import { Reflector } from '@nestjs/core';
import { routeMetadata } from './route-metadata.js';

const Marked = Reflector.createDecorator<string>();

@Marked('class')
class Base {
  @Marked('handler')
  marked() {}

  plain() {}
}

@Marked('subclass')
class Derived extends Base {}

describe(routeMetadata.name, () => {
  const reflector = new Reflector();

  it("reads the handler's value over its class's, as getAllAndOverride does", () => {
    expect(routeMetadata(reflector, Marked, Base.prototype.marked, Base)).toBe('handler');
    expect(routeMetadata(reflector, Marked, Base.prototype.plain, Base)).toBe('class');
  });

  it('keeps an inherited handler apart per class: each class has its own decorators', () => {
    expect(routeMetadata(reflector, Marked, Base.prototype.plain, Base)).toBe('class');
    expect(routeMetadata(reflector, Marked, Derived.prototype.plain, Derived)).toBe('subclass');
  });

  it('remembers a missing value too, and reads each route once', () => {
    const Other = Reflector.createDecorator<string>();
    let reads = 0;
    const counting = new Reflector();
    const read = counting.getAllAndOverride.bind(counting);
    counting.getAllAndOverride = ((...args: Parameters<typeof read>) => {
      reads++;
      return read(...args);
    }) as typeof counting.getAllAndOverride;

    expect(routeMetadata(counting, Other, Base.prototype.marked, Base)).toBeUndefined();
    expect(routeMetadata(counting, Other, Base.prototype.marked, Base)).toBeUndefined();
    expect(reads).toBe(1);
  });
});
