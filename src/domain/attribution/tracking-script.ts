/**
 * The tracking script served at `GET /t.js` (API.md §6.5), kept small by hand (no build step): it
 * keeps a visitor id `vid` (a UUID in localStorage and a first-party cookie, or in memory when the
 * page's storage is blocked), reads `vcx` from the landing URL and reports both to
 * `POST /t/collect` on load. `window.outreach.vid` is the id to send with `POST /v1/conversion`;
 * `window.outreach.identify({email|phone|external_id})` ties the visitor to a contact. The server
 * is the script's own origin and the workspace its `?w=`. Every step is wrapped: whatever the host
 * page or the browser does, the script never throws. Reports are `text/plain` (sendBeacon, else
 * fetch with keepalive), so a browser sends them without a CORS preflight.
 */
export const TRACKING_SCRIPT = `(function(){try{
var d=document,w=window,n=navigator,K="_ovid",R=/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,s=d.currentScript,o,q,v,x;
try{var u=new URL(s&&s.src||"");o=u.origin;q=u.searchParams.get("w")}catch(e){}
if(!o||o=="null")return;
function get(){var t;try{t=w.localStorage.getItem(K)}catch(e){}if(t&&R.test(t))return t;try{var m=d.cookie.match(/(?:^|; )_ovid=([^;]+)/);if(m&&R.test(m[1]))return m[1]}catch(e){}}
function put(t){try{w.localStorage.setItem(K,t)}catch(e){}try{d.cookie=K+"="+t+"; Max-Age=31536000; Path=/; SameSite=Lax"}catch(e){}}
function uuid(){try{if(w.crypto&&crypto.randomUUID)return crypto.randomUUID()}catch(e){}var h="",i,r;for(i=0;i<32;i++){r=Math.random()*16|0;h+=(i==12?4:i==16?r&3|8:r).toString(16)}return h.slice(0,8)+"-"+h.slice(8,12)+"-"+h.slice(12,16)+"-"+h.slice(16,20)+"-"+h.slice(20)}
function send(p,b){try{b.vid=v;if(q)b.w=q;var t=JSON.stringify(b),a=o+p;if(n.sendBeacon&&n.sendBeacon(a,new Blob([t],{type:"text/plain"})))return;if(w.fetch)w.fetch(a,{method:"POST",body:t,keepalive:true,credentials:"omit",headers:{"content-type":"text/plain"}}).catch(function(){})}catch(e){}}
v=get()||uuid();put(v);
try{x=new URL(w.location.href).searchParams.get("vcx")}catch(e){}
var api=w.outreach&&typeof w.outreach=="object"?w.outreach:{};try{w.outreach=api}catch(e){}
api.vid=v;api.vcx=x&&R.test(x)?x:null;
api.identify=function(i){try{if(i&&typeof i=="object")send("/t/identify",{email:i.email,phone:i.phone,external_id:i.external_id})}catch(e){}};
send("/t/collect",{vcx:api.vcx||void 0,url:String(w.location.href).slice(0,2000),referrer:(d.referrer||"").slice(0,2000)||void 0});
}catch(e){}})();
`;

/** The script gzipped once (served when the browser accepts gzip). */
export const TRACKING_SCRIPT_GZIP = Bun.gzipSync(new TextEncoder().encode(TRACKING_SCRIPT));
