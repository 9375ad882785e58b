import { type ArgumentMetadata, type PipeTransform, ValidationPipe, type ValidationError } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { unstorableStringProblems, validationFailed } from '../../../domain/shared/validation-errors.js';

/** Flattens class-validator errors into one readable line per problem, e.g. "format: must be one of …". */
export function describeValidationErrors(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((error) => {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    // A value given with the wrong type is told only that: "must be a string", not also "too long"
    // (`?q=a&q=b`). A missing one hears every rule it must meet.
    const constraints = error.constraints ?? {};
    const typed = error.value === undefined ? [] : TYPE_CHECKS.filter((name) => name in constraints);
    const own = (typed.length > 0 ? typed.map((name) => constraints[name]) : Object.values(constraints)).map(
      (message) => `${path}: ${message}`,
    );
    return [...own, ...describeValidationErrors(error.children ?? [], path)];
  });
}

/** class-validator's type checks: when one fails, the value's other constraints say nothing useful. */
const TYPE_CHECKS = ['isString', 'isBoolean', 'isInt', 'isNumber', 'isArray', 'isObject'];

const NUL_ALLOWED = 'skillhost:validation:nul-allowed';

/**
 * Lets NUL through the string check on one field, because the service refuses it there with a
 * more precise error: a resource path with NUL is RESOURCE_OUTSIDE_SKILL, as documented.
 */
export function NulAllowed(): PropertyDecorator {
  return (target, key) => Reflect.defineMetadata(NUL_ALLOWED, true, target, key);
}

const CHECKED_BY_SERVICE = 'skillhost:validation:checked-by-service';

/**
 * Leaves a free-form field's strings to the service, which checks them with its own rules: a
 * tool's arguments (GraphQL `runSkillTool`) are checked by that tool, where NUL is allowed in a path.
 */
export function StringsCheckedByService(): PropertyDecorator {
  return (target, key) => Reflect.defineMetadata(CHECKED_BY_SERVICE, true, target, key);
}

function nulAllowed(metatype: ArgumentMetadata['metatype'], key: string): boolean {
  return hasFieldMark(metatype, NUL_ALLOWED, key);
}

function hasFieldMark(metatype: ArgumentMetadata['metatype'], mark: string, key: string): boolean {
  return typeof metatype === 'function' && Reflect.getMetadata(mark, metatype.prototype as object, key) === true;
}

/** What the DTO rules found, carried from the exception factory to `transform`, which adds the unknown fields. */
class DtoProblems {
  constructor(readonly problems: string[]) {}
}

/** Keys Nest's pipe deletes before class-validator sees them (its `stripProtoKeys`): never reported as unknown. */
const STRIPPED_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

const declaredFieldsOf = new WeakMap<object, ReadonlySet<string>>();

/**
 * The fields a DTO class declares: those with any class-validator rule (`@Allow` included), which is what `whitelist`
 * keeps.
 */
function declaredFields(metatype: NonNullable<ArgumentMetadata['metatype']>): ReadonlySet<string> {
  let fields = declaredFieldsOf.get(metatype);
  if (fields === undefined) {
    fields = new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(metatype, '', false, false)
        .map((rule) => rule.propertyName),
    );
    declaredFieldsOf.set(metatype, fields);
  }
  return fields;
}

/**
 * DTO validation for every route and GraphQL operation: storable strings, unknown fields rejected,
 * failures VALIDATION_FAILED listing the first problems and counting the rest.
 *
 * Unknown top-level fields are found here, against the DTO's declared fields, and left out of what
 * class-transformer and class-validator get: class-transformer copies every key of every object
 * (its key list is deduplicated in quadratic time), so a body of 100,000 unknown fields kept the
 * process busy for seconds before class-validator refused them. The answer is the same as theirs:
 * the unknown fields first ("x: property x should not exist"), then the declared fields' problems.
 */
class AppValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // GraphQL arguments arrive as 'body'. Route parameters are not checked here: an id with NUL
    // names no row (not found), a resource path with NUL is RESOURCE_OUTSIDE_SKILL.
    if (metadata.type !== 'body' && metadata.type !== 'query') return this.validated(value, metadata, []);
    const problems = unstorableStringProblems(
      value,
      (key) => nulAllowed(metadata.metatype, key),
      (key) => hasFieldMark(metadata.metatype, CHECKED_BY_SERVICE, key),
    );
    if (problems.length > 0) throw validationFailed(problems);
    const unknown = this.unknownFields(value, metadata);
    if (unknown.length === 0) return this.validated(value, metadata, []);
    const declared = declaredFields(metadata.metatype!);
    await this.validated(
      Object.fromEntries(Object.entries(value as object).filter(([key]) => declared.has(key))),
      metadata,
      unknown,
    );
    throw validationFailed(unknown.map(unknownFieldProblem));
  }

  /** The DTO's own checks (class-transformer, then class-validator); their problems come after the unknown fields'. */
  private async validated(value: unknown, metadata: ArgumentMetadata, unknown: readonly string[]): Promise<unknown> {
    try {
      return await super.transform(value, metadata);
    } catch (error) {
      if (error instanceof DtoProblems)
        throw validationFailed([...unknown.map(unknownFieldProblem), ...error.problems]);
      throw error;
    }
  }

  /**
   * The top-level keys of a plain object its DTO does not declare, in the object's order; none when Nest would not
   * validate it.
   */
  private unknownFields(value: unknown, metadata: ArgumentMetadata): string[] {
    const { metatype } = metadata;
    if (
      typeof value !== 'object' ||
      value === null ||
      Array.isArray(value) ||
      metatype === undefined ||
      !this.toValidate(metadata)
    )
      return [];
    const declared = declaredFields(metatype);
    return Object.keys(value).filter((key) => !declared.has(key) && !STRIPPED_KEYS.has(key));
  }
}

/** class-validator's own words for a field `forbidNonWhitelisted` refuses. */
function unknownFieldProblem(key: string): string {
  return `${key}: property ${key} should not exist`;
}

/**
 * The app's one global pipe: DTO validation, except for a custom decorator's value (the principal), which is the
 * app's own and never validated (ValidationPipe's `validateCustomDecorators` is off), passed on as it is, without the
 * promises ValidationPipe makes on every route for it.
 */
export function createAppPipe(validation: ValidationPipe = createValidationPipe()): PipeTransform {
  return {
    transform: (value: unknown, metadata: ArgumentMetadata) =>
      metadata.type === 'custom' ? value : validation.transform(value, metadata),
  };
}

export function createValidationPipe(): ValidationPipe {
  return new AppValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    exceptionFactory: (errors) => new DtoProblems(describeValidationErrors(errors)),
  });
}
