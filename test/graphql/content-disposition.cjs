/**
 * Jest maps `content-disposition` here (jest.config.js). mercurius requires @fastify/static, whose
 * CommonJS build requires the ES-only content-disposition 3: Node (20.19+) can require an ES
 * module, Jest's own module loader cannot before Node 24.9. This loads it with Node's require.
 */
module.exports = require('node:module').createRequire(__filename)('content-disposition');
