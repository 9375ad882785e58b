import { readFileSync } from 'node:fs';
import { discoverSkills } from './dist/src/skills/skill-discovery.js';
import { SkillRanker } from './dist/src/skills/ranking/skill-ranker.js';
import { WEIGHTS } from './dist/src/skills/ranking/query-terms.js';
const path='/work/shared/corpus';
const { skills } = discoverSkills({ directories: [{ configured: path, path }], mode: 'lenient', maxDepth: 6, maxSkills: 1e6 });
const queries = JSON.parse(readFileSync(process.env.Q ?? 'bench/fixtures/skill-queries.json','utf8'));
const r = new SkillRanker(skills.map(s=>({name:s.name, description:s.description})));
function evalr(){ const cuts={5:0,10:0,20:0,40:0}; let slots=0; const kinds={};
 for (const q of queries){ if(!q.needed.length) continue; const ranked=r.rank(q.query,{limit:40}).map(m=>m.name);
  for (const slot of q.needed){ slots++; const at=ranked.findIndex(n=>slot.includes(n)); for (const c of [5,10,20,40]) if(at!==-1&&at<c) cuts[c]++; kinds[q.kind]??=[0,0]; kinds[q.kind][1]++; if(at!==-1&&at<20) kinds[q.kind][0]++; } }
 return Object.values(cuts).map(v=>(v/slots).toFixed(3)).join(' ')+'  '+Object.entries(kinds).map(([k,[a,b]])=>k+':'+(a/b).toFixed(2)).join(' ');}
for (const rel of [0.35]) { WEIGHTS.related=rel; console.log('related',rel, evalr()); }
if (process.env.MISS) for (const q of queries){ if(!q.needed.length) continue; const ranked=r.rank(q.query,{limit:20}).map(m=>m.name); const miss=q.needed.filter(slot=>!ranked.some(n=>slot.includes(n))); if(miss.length) console.log('-',q.kind,q.query,'| missing',miss.map(s=>s[0]).join(','),'| got',ranked.slice(0,4).join(','));}
