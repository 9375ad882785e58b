import { WEIGHTS } from './dist/src/skills/ranking/query-terms.js';
for (const [k,v] of Object.entries(JSON.parse(process.env.W ?? '{}'))) WEIGHTS[k]=v;
await import('./ttune.mjs');
