export const DATA_SOURCE = Symbol('DATA_SOURCE');
