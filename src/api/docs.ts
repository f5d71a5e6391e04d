import { Elysia } from "elysia";

// GET /docs – a self-contained API reference rendered from /v1/openapi.json (works offline).
const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>outreach API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d2330;background:#f7f8fa}
header{background:#1d2330;color:#fff;padding:16px 24px}header h1{margin:0;font-size:20px}
main{max-width:1000px;margin:0 auto;padding:16px 24px}
.tag{margin-top:28px;font-size:18px;border-bottom:1px solid #d5d9e0}
details{background:#fff;border:1px solid #e1e4ea;border-radius:6px;margin:8px 0}
summary{cursor:pointer;padding:8px 12px;font-family:ui-monospace,monospace}
.m{display:inline-block;min-width:64px;font-weight:600}.GET{color:#1a7f37}.POST{color:#0969da}.PATCH{color:#9a6700}.DELETE{color:#cf222e}
.body{padding:0 12px 12px}pre{background:#f3f4f6;padding:8px;overflow:auto;font-size:12px}
</style></head><body><header><h1>outreach API reference</h1>
<div>Authenticate with <code>Authorization: Bearer opk_…</code>. Machine-readable: <a style="color:#9cf" href="/v1/openapi.json">/v1/openapi.json</a></div></header>
<main id="root">Loading…</main>
<script>
fetch('/v1/openapi.json').then(r=>r.json()).then(doc=>{
  const root=document.getElementById('root');root.textContent='';
  const byTag={};
  for(const [path,ops] of Object.entries(doc.paths||{}))for(const [method,op] of Object.entries(ops)){
    const tag=(op.tags&&op.tags[0])||'Other';(byTag[tag]=byTag[tag]||[]).push({path,method:method.toUpperCase(),op});}
  for(const tag of Object.keys(byTag).sort()){
    const h=document.createElement('h2');h.className='tag';h.textContent=tag;root.appendChild(h);
    for(const {path,method,op} of byTag[tag]){
      const d=document.createElement('details');const s=document.createElement('summary');
      const m=document.createElement('span');m.className='m '+method;m.textContent=method;s.appendChild(m);
      s.appendChild(document.createTextNode(' '+path+(op.summary?' — '+op.summary:'')));d.appendChild(s);
      const b=document.createElement('div');b.className='body';
      if(op.description){const p=document.createElement('p');p.textContent=op.description;b.appendChild(p);}
      const pre=document.createElement('pre');pre.textContent=JSON.stringify({parameters:op.parameters,requestBody:op.requestBody,responses:op.responses},null,2);
      b.appendChild(pre);d.appendChild(b);root.appendChild(d);}
  }
}).catch(e=>{document.getElementById('root').textContent='Could not load the OpenAPI document: '+e});
</script></body></html>`;

export function docsRoutes() {
  return new Elysia({ name: "docs" }).get(
    "/docs",
    ({ set }) => {
      set.headers["content-type"] = "text/html; charset=utf-8";
      return PAGE;
    },
    { detail: { hide: true } },
  );
}
