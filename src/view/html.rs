//! One self-contained HTML page for a run: what the scenario teaches, the
//! verdict in words, a stepper that walks the run event by event showing
//! every agent's state at each (the simulator's own, from its frames: see
//! `view::steps`), the picture, every request in a table, the event list
//! with a filter, and the command that replays it. No network: the SVG is
//! inline, the data, the style and the scripts are in the page.

use crate::protocol::{Millis, RequestId, Status};
use crate::scenario::Report;
use crate::trace::Event;
use crate::world::Outcome;
use std::fmt::Write;

/// What the page says about the run besides the outcome itself.
pub struct Page<'a> {
    pub about: &'a str,
    pub report: &'a Report,
    /// The command that replays this run, as the report prints it.
    pub reproduce: &'a str,
    /// The run's picture (`view::svg`).
    pub svg: &'a str,
}

/// HTML text and attribute values: the XML escaping the SVG uses serves here too.
pub(super) fn esc(s: &str) -> String {
    super::svg::escape(s)
}

pub(super) const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#212121;max-width:none}\
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}\
.about{white-space:pre-wrap;max-width:80ch;color:#37474f}\
.verdict{display:inline-block;padding:6px 12px;border-radius:4px;font-weight:bold;margin:12px 0}\
.pass{background:#e8f5e9;color:#1b5e20}.fail{background:#ffebee;color:#b71c1c}\
.pass.deadlocked{background:#fff3e0;color:#bf360c}\
table{border-collapse:collapse}td,th{border-bottom:1px solid #e0e0e0;padding:3px 10px;text-align:left;vertical-align:top}\
th{background:#f5f5f5}.t{font-variant-numeric:tabular-nums;text-align:right;white-space:nowrap;color:#546e7a}\
.picture{overflow:auto;border:1px solid #e0e0e0;max-height:80vh}\
code{background:#f5f5f5;padding:2px 6px;border-radius:3px}\
table.events.protocol-only tr.work{display:none}\
table.events tr.now{background:#fff59d}table.events tr.parted td{border-top:3px solid #d81b60}\
.two{display:grid;grid-template-columns:1fr 1fr;gap:16px}.two>div{min-width:0}.parted{color:#ad1457;font-weight:bold}.evbox{max-height:60vh;overflow:auto;position:relative;border:1px solid #e0e0e0}\
.stepper{position:sticky;top:0;background:#fff;border-bottom:1px solid #e0e0e0;padding:8px 0;z-index:1}\
.stepper button{font-size:15px;min-width:2.4em}.stepper input[type=range]{width:40%;vertical-align:middle}\
.said{margin:6px 0;font-weight:bold}.cards{display:flex;flex-wrap:wrap;gap:10px;align-items:flex-start}.rows{max-height:260px;overflow:auto}\
.card{border:1px solid #cfd8dc;border-radius:6px;padding:6px 10px;min-width:220px;max-width:460px}\
.card h3{font-size:15px;margin:0 0 4px}.card .st{color:#546e7a;font-weight:normal}\
.card table{font-size:12.5px}.changed{outline:2px solid #ffb300}.cycle{color:#b71c1c;font-weight:bold}\
.inbox pre{margin:2px 0 8px;padding:4px 8px;background:#f5f5f5;white-space:pre-wrap;word-break:break-all;font-size:12px}";

pub(super) const FILTER: &str =
    "function only(p){for(const t of document.querySelectorAll('table.events'))t.classList.toggle('protocol-only',p)}";

/// The page, as UTF-8 text.
pub fn html(outcome: &Outcome, page: &Page) -> String {
    let r = page.report;
    let mut out = String::with_capacity(page.svg.len() + 16 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{} (seed {})</title><style>{STYLE}</style></head><body>\n",
        esc(&r.name),
        r.seed
    );
    let _ = writeln!(out, "<h1>{}</h1><div>seed {} · {}</div>", esc(&r.name), r.seed, esc(&r.path));
    if !page.about.is_empty() {
        let _ = writeln!(out, "<p class=\"about\">{}</p>", esc(page.about));
    }
    verdict(&mut out, r);
    summarised(&mut out, outcome);
    if let Some(steps) = super::steps::steps(outcome) {
        out.push_str("<h2>Step through it</h2>");
        controls(&mut out, &[("", "")], None);
        pane(&mut out, "", &steps);
        script(&mut out, &[""], None);
    }
    picture(&mut out, page.svg, "");
    requests(&mut out, outcome);
    events(&mut out, outcome, "", None);
    let _ = writeln!(out, "<h2>Replay it</h2><p><code>{}</code></p>", esc(page.reproduce));
    let _ = writeln!(out, "<script>{FILTER}</script></body></html>");
    out
}

/// The most rows the event list and the request table show: past them, the
/// page says how many it left out (a big team logs millions).
pub const MAX_LISTED: usize = 50_000;

/// The largest picture a page holds inline. A run whose teammates all
/// differ (an offer passed round a big team) draws a lane each, and its
/// picture alone can outgrow the rest of the page many times: past this the page says so
/// and leaves it to `--svg`.
pub const MAX_PICTURE: usize = 32 << 20;

/// The run's picture, or what stands for one too big to hold (`p`: the
/// prefix of a run on a page of two).
pub(super) fn picture(out: &mut String, svg: &str, p: &str) {
    if svg.len() <= MAX_PICTURE {
        let _ = writeln!(out, "<h2>The run</h2><div class=\"picture\" id=\"{p}picture\">{svg}</div>");
        return;
    }
    let _ = writeln!(
        out,
        "<h2>The run</h2><p class=\"summary\" id=\"{p}picture\"><b>Summarised:</b> the picture of this run \
         takes {}, more than a page holds ({} at most): it is left out; <code>--svg FILE</code> writes it.</p>",
        crate::words::bytes(svg.len() as u64),
        crate::words::bytes(MAX_PICTURE as u64)
    );
}

/// What a page of a big run leaves out, said at its top.
pub(super) fn summarised(out: &mut String, o: &Outcome) {
    let (events, requests) = (o.events.len(), o.requests.len());
    if events <= super::steps::MAX_STEPPED && requests <= MAX_LISTED {
        return;
    }
    let _ = writeln!(
        out,
        "<p class=\"summary\"><b>Summarised:</b> this run logged {events} events and made {requests} requests, \
         more than a page holds (it steps through at most {} events and lists at most {MAX_LISTED} of each). \
         The stepper is left out{}, and the lists below stop at their first {MAX_LISTED}; the picture folds alike \
         teammates, and the trace (<code>--trace</code>) has every event.</p>",
        super::steps::MAX_STEPPED,
        if events > super::steps::MAX_STEPPED { "" } else { " where a run has more events" },
    );
}

pub(super) fn verdict(out: &mut String, r: &Report) {
    let c = &r.counts;
    // A pass that ends deadlocked (the policy allows it, and the file
    // expects it) says so in its verdict: a bare green PASS beside "still
    // deadlocked" reads as if nothing were stuck.
    let stuck: Vec<String> = r.deadlocks.iter().filter(|d| d.broken_ms.is_none()).map(|d| d.cycle()).collect();
    let (class, word) = match (r.passed, stuck.is_empty()) {
        (false, _) => ("fail", "FAIL"),
        (true, true) => ("pass", "PASS"),
        (true, false) => ("pass deadlocked", "PASS · DEADLOCKED"),
    };
    let _ = write!(out, "<div class=\"verdict {class}\">{word}</div>");
    match r.failures.first() {
        Some(f) => {
            let _ = write!(out, " <b>{}</b> — {} (at {})", esc(&f.check), esc(&f.message), Millis(f.at_ms));
            if r.failures.len() > 1 {
                let _ = write!(out, " and {} more", r.failures.len() - 1);
            }
        }
        None if !stuck.is_empty() => {
            let _ = write!(
                out,
                " every invariant held and every expectation was met, but the run ended deadlocked: {} (the \
                 policy allows deadlocks)",
                esc(&stuck.join("; "))
            );
        }
        None => out.push_str(" every invariant held and every expectation was met"),
    }
    let n = |count: usize, one: &str, many: &str| format!("{count} {}", if count == 1 { one } else { many });
    let _ = writeln!(
        out,
        "<p>{} · {} · {} ignored · {} expired · {} refused · {} lost · {} · {} virtual, stopped: {}</p>",
        n(c.messages, "message", "messages"),
        n(c.handshakes, "handshake", "handshakes"),
        c.ignored,
        c.expired,
        c.refused,
        c.lost,
        n(c.deadlocks, "deadlock", "deadlocks"),
        Millis(r.virtual_ms),
        r.stopped_by
    );
    for d in &r.deadlocks {
        let end = match (d.broken_ms, &d.broken_by) {
            (Some(at), Some(by)) => format!("broken at {} by [{}]", Millis(at), esc(by)),
            _ => "still deadlocked at the end".to_string(),
        };
        let _ = writeln!(out, "<p>⟳ deadlock {} from {}: {end}</p>", esc(&d.cycle()), Millis(d.formed_ms));
    }
}

/// When and why each request reached its end state, from the log.
fn endings(o: &Outcome) -> std::collections::BTreeMap<RequestId, (Millis, String)> {
    let mut out = std::collections::BTreeMap::new();
    for e in &o.events {
        match &e.event {
            Event::Verdict { request_id, sender, verdict: crate::protocol::Verdict::Applied { .. }, .. } => {
                out.insert(*request_id, (e.t, format!("answered by {}", o.names.agent(*sender))));
            }
            Event::Expired { id, default, .. } => {
                out.insert(*id, (e.t, format!("deadline passed: default {}", default.as_str())));
            }
            _ => {}
        }
    }
    out
}

fn requests(out: &mut String, o: &Outcome) {
    let _ = writeln!(out, "<h2>Requests</h2>");
    if o.requests.is_empty() {
        out.push_str("<p>No request was made.</p>\n");
        return;
    }
    out.push_str(
        "<table><tr><th>label</th><th>kind</th><th>from → to</th><th>sent</th><th>deadline</th>\
         <th>end state</th><th>at</th><th>why</th></tr>\n",
    );
    let ends = endings(o);
    for q in o.requests.iter().take(MAX_LISTED) {
        let label = o.names.label(q.id).map_or_else(|| q.id.to_string(), str::to_string);
        let deadline = if q.deadline.is_never() { "none".to_string() } else { q.deadline.to_string() };
        let (at, why) = match ends.get(&q.id) {
            Some((t, why)) => (t.to_string(), why.clone()),
            None if q.status == Status::Pending => ("—".into(), "still pending when the run stopped".into()),
            None => ("—".into(), String::new()),
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{} → {}</td><td class=\"t\">{}</td><td class=\"t\">{}</td>\
             <td>{}</td><td class=\"t\">{}</td><td>{}</td></tr>",
            esc(&label),
            q.kind,
            esc(o.names.agent(q.requester)),
            esc(o.names.agent(q.target)),
            q.sent_at,
            deadline,
            q.status,
            at,
            esc(&why)
        );
    }
    out.push_str("</table>\n");
    if o.requests.len() > MAX_LISTED {
        let _ = writeln!(out, "<p>… and {} more requests, not listed (summarised).</p>", o.requests.len() - MAX_LISTED);
    }
}

pub(super) const EVENTS_FILTER: &str = "<p><label><input type=\"checkbox\" onchange=\"only(this.checked)\"> \
     protocol only (hide each step of work written)</label></p>";

/// The event list, ids prefixed with `p` (one page may hold two runs);
/// `parted` marks the first event where two runs differ.
pub(super) fn events(out: &mut String, o: &Outcome, p: &str, parted: Option<usize>) {
    if p.is_empty() {
        let _ = writeln!(out, "<h2>Events</h2>{EVENTS_FILTER}");
    }
    // In a box of its own: the stepper scrolls the box to the current event,
    // not the page away from the stepper.
    let _ = writeln!(out, "<div class=\"evbox\" id=\"{p}evbox\"><table class=\"events\" id=\"{p}events\">");
    for (k, e) in o.events.iter().enumerate().take(MAX_LISTED) {
        let mut class = if e.event.is_protocol() { "protocol" } else { "work" }.to_string();
        if parted == Some(k) {
            class.push_str(" parted");
        }
        let _ = writeln!(
            out,
            "<tr class=\"{class}\" id=\"{p}ev{k}\"><td class=\"t\">{}</td><td>{}</td></tr>",
            e.t,
            esc(&super::page_sentence(e, &o.names))
        );
    }
    out.push_str("</table></div>\n");
    if o.events.len() > MAX_LISTED {
        let more = o.events.len() - MAX_LISTED;
        let _ = writeln!(out, "<p>… and {more} more events, not listed (summarised): the trace has them all.</p>");
    }
}

/// The stepper's controls, shared by every run on the page, and where each
/// run's last event is told in words (`(prefix, heading)` per run).
pub(super) fn controls(out: &mut String, runs: &[(&str, &str)], parted: Option<&str>) {
    out.push_str(
        "<div class=\"stepper\" id=\"stepper\">\
         <button id=\"first\" title=\"first event (Home)\">|◀</button> \
         <button id=\"back\" title=\"one event back (←)\">◀</button> \
         <button id=\"play\" title=\"play / pause (space)\">▶ play</button> \
         <button id=\"next\" title=\"one event on (→)\">▶</button> \
         <button id=\"last\" title=\"last event (End)\">▶|</button> \
         <input type=\"range\" id=\"slider\" min=\"0\" value=\"0\" aria-label=\"event\"> \
         <span id=\"where\"></span> \
         <label>speed <select id=\"speed\"><option value=\"1000\">1 event/s</option>\
         <option value=\"400\" selected>2.5 events/s</option><option value=\"100\">10 events/s</option></select></label>",
    );
    if let Some(words) = parted {
        let _ = write!(out, "<div class=\"parted\" id=\"parted\">{}</div>", esc(words));
    }
    if runs.len() > 1 {
        out.push_str("<div class=\"two\">");
    }
    for (p, heading) in runs {
        let title = if heading.is_empty() { String::new() } else { format!("<i>{}:</i> ", esc(heading)) };
        let _ = write!(out, "<div class=\"said\">{title}<span id=\"{p}said\"></span></div>");
    }
    if runs.len() > 1 {
        out.push_str("</div>");
    }
    out.push_str("</div>\n");
}

/// One run's panes: every agent's state and the world's at the current
/// event, and the steps they are looked up in (`view::steps`).
pub(super) fn pane(out: &mut String, p: &str, steps: &serde_json::Value) {
    // Inside a script element, `</script` ends it early and `<!--` then
    // `<script` makes the parser skip the real end (the "double-escaped"
    // state): no `<` at all, then. In JSON a `<` is only ever inside a
    // string, where `\u003c` reads back as the same text.
    let data = steps.to_string().replace('<', "\\u003c");
    let _ = writeln!(
        out,
        "<div class=\"cards\" id=\"{p}cards\"></div><div id=\"{p}world\"></div>\
         <script type=\"application/json\" id=\"{p}steps\">{data}</script>"
    );
}

/// The script that steps every run on the page together; `parted` is the
/// first event where two runs differ.
pub(super) fn script(out: &mut String, prefixes: &[&str], parted: Option<usize>) {
    let panes = serde_json::to_string(prefixes).unwrap_or_else(|_| "[\"\"]".into());
    let parted = parted.map_or_else(|| "null".to_string(), |d| d.to_string());
    let _ = writeln!(out, "<script>const PANES={panes},PARTED={parted};\n{STEPPER}</script>");
}

/// The stepper's script: look-ups and drawing, no protocol logic.
const STEPPER: &str = r##"(function(){
const $=id=>document.getElementById(id);
const esc=s=>String(s).replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
const panes=PANES.map(p=>{const S=JSON.parse($(p+'steps').textContent);const byAgent=S.agents.map(()=>[]);
for(const f of S.frames.agents)byAgent[f[1]].push(f);return {p,S,byAgent,shown:[]};});
const n=Math.max(...panes.map(x=>x.S.events.length));if(!n)return;
function own(s,name){return s.replace(new RegExp('(?<![A-Za-z0-9_-])'+name.replace(/[.*+?^${}()|[\]\\]/g,'\\$&')+'(?![A-Za-z0-9_-])','g'),'\u0001');}
function last(list,k){let b=null;for(const f of list){if(f[0]<=k+1)b=f;else break;}return b;}
// A big team's frames say who moved: its roster at k is the first one with every move up to k.
function rosterAt(S,k){const r=(S.roster||[]).slice();for(const f of S.frames.world){if(f[0]>k+1)break;for(const [i,st] of f[1].moved||[])r[i]=st;}return r;}
function table(list,k){const m=new Map();for(const f of list){if(f[0]>k+1)break;for(const r of f[2].requests)m.set(r.label,r);}return [...m.values()];}
function fmt(ms){if(ms<1000)return ms+'ms';const s=ms/1000;if(s<60)return (Number.isInteger(s)?s:s.toFixed(3))+'s';const m=Math.floor(ms/60000),r=(ms%60000)/1000;return m+'m'+(r?(Number.isInteger(r)?r:r.toFixed(3))+'s':'');}
let k=0,timer=null;
const slider=$('slider');slider.max=n-1;
function rows(rs,now){if(!rs.length)return '';let h='<div class="rows"><table><tr><th>request</th><th>kind</th><th>from → to</th><th>status</th><th>deadline</th></tr>';
for(const r of rs){let d=r.deadline===null?'none':r.deadline;if(r.status==='pending'&&r.deadline_ms!==null)d+=' ('+(r.deadline_ms>now?fmt(r.deadline_ms-now)+' left':'due')+')';
h+='<tr><td>'+esc(r.label)+'</td><td>'+r.kind+'</td><td>'+esc(r.from)+' → '+esc(r.to)+'</td><td>'+r.status+'</td><td>'+esc(d)+'</td></tr>';}
return h+'</table></div>';}
// A run shorter than the other stays at its last event.
function drawPane(x){const S=x.S,p=x.p,m=S.events.length;if(!m)return;const kk=Math.min(k,m-1);const e=S.events[kk];
$(p+'said').textContent=(k>=m?'(this run ended at event '+m+') ':'')+e.t+'  '+e.text;
const w=last(S.frames.world,kk);const world=w?w[1]:{roster:[],files:[],waits:[],cycles:[]};let h='';
const roster=world.roster||rosterAt(S,kk);
const cards=[];
S.agents.forEach((name,i)=>{const f=last(x.byAgent[i],kk);const v=f?f[2]:{doing:'',requests:[]};const st=roster[i]||'';
const changed=f&&f[0]===kk+1;
const down=st==='killed'||st==='crashed';
let b='<div>'+(down?'<i>as it was when it went down:</i> ':'')+esc(v.doing)+'</div>';
const rd=(world.reading||[])[i];
if(rd)b+='<div class="reading">reading its inbox file: busy until '+esc(rd.until)+' ('+(rd.until_ms>e.ms?fmt(rd.until_ms-e.ms)+' left':'done')+'), answering nothing meanwhile</div>';
if(v.gate&&v.gate!=='not_required')b+='<div>plan gate: '+esc(v.gate)+(v.plan?' ['+esc(v.plan)+']':'')+'</div>';
if(v.set_aside&&v.set_aside.length)b+='<div>set aside: '+v.set_aside.map(esc).join('; ')+'</div>';
b+=rows(table(x.byAgent[i],kk),e.ms);
cards.push({i,name,st,changed,b,key:i?st+'|'+own(b,name):null});});
// Teammates whose cards say the same but for their own names are one card (a team of 100).
for(let a=0;a<cards.length;){let z=a+1;while(z<cards.length&&cards[a].key!==null&&cards[z].key===cards[a].key)z++;
const c=cards[a],many=z-a>=3,changed=cards.slice(a,z).some(y=>y.changed);
const title=many?esc(c.name)+' … '+esc(cards[z-1].name)+' <span class="st">'+esc(c.st)+' · '+(z-a)+' alike, '+esc(c.name)+' shown</span>':esc(c.name)+' <span class="st">'+esc(c.st)+'</span>';
h+='<div class="card'+(changed?' changed':'')+'" id="'+p+'agent'+c.i+'"'+(many?' data-alike="'+(z-a)+'"':'')+'><h3>'+title+'</h3>'+c.b+'</div>';
if(many)a=z;else a++;}
$(p+'cards').innerHTML=h;let g='';
if(world.files.length)g+='<p>files: '+world.files.map(f=>esc(f.path)+' '+f.done+'/'+f.total+' ('+esc(f.writer)+')').join(' · ')+'</p>';
if(world.waits.length)g+='<p>waits: '+world.waits.map(y=>esc(y.from)+' waits on '+esc(y.to)+' for ['+esc(y.request)+']').join(' · ')+'</p>'+graph(world.waits,world.cycles);
for(const c of world.cycles)g+='<p class="cycle">⟳ deadlock: '+c.map(esc).join(' → ')+' → '+esc(c[0])+'</p>';
for(const f of world.inbox||[])g+='<div class="inbox"><b>'+esc(f.path)+'</b> ('+f.lines.length+(f.lines.length===1?' line':' lines')+')'+(f.lines.length?'<pre>'+f.lines.map(esc).join('\n')+'</pre>':'')+'</div>';
$(p+'world').innerHTML=g;
for(const r of x.shown)r.classList.remove('now');x.shown=[];const row=$(p+'ev'+kk);if(row){row.classList.add('now');x.shown.push(row);const box=$(p+'evbox');if(box)box.scrollTop=row.offsetTop-box.clientHeight/2;}
mark(p,e.y);}
function draw(){const first=panes[0].S.events;const e=first[Math.min(k,first.length-1)];$('where').textContent='event '+(k+1)+' of '+n+' · '+e.t;slider.value=k;
if(PARTED!==null){const d=$('parted');if(d)d.textContent=k<PARTED?'the two runs agree up to here; they part at event '+(PARTED+1):'≠ the two runs parted at event '+(PARTED+1)+(k===PARTED?': this one':'');}
panes.forEach(drawPane);}
// The wait-for graph as the simulator holds it: who waits on whom, the
// edges of a cycle in red. Agents on a circle; only the drawing is done here.
function graph(waits,cycles){const names=[...new Set(waits.flatMap(y=>[y.from,y.to]))];const r=names.length>1?70:0,c=95,pos={};
names.forEach((nm,i)=>{const a=-Math.PI/2+2*Math.PI*i/names.length;pos[nm]=[c+1.6*r*Math.cos(a)+60,c+r*Math.sin(a)];});
const inCycle=(f,t)=>cycles.some(cy=>cy.some((m,i)=>m===f&&cy[(i+1)%cy.length]===t));
let s='<svg class="waits" width="'+(2*c+120)+'" height="'+(2*c)+'" role="img" aria-label="wait-for graph"><defs><marker id="wf-h" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#455a64"/></marker><marker id="wf-c" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#b71c1c"/></marker></defs>';
for(const y of waits){const [x1,y1]=pos[y.from],[x2,y2]=pos[y.to];const d=Math.hypot(x2-x1,y2-y1)||1,ux=(x2-x1)/d,uy=(y2-y1)/d;
const red=inCycle(y.from,y.to);const bx=-uy*8,by=ux*8;
const out=Math.min(Math.abs(ux)>1e-9?40/Math.abs(ux):1e9,Math.abs(uy)>1e-9?14/Math.abs(uy):1e9);
s+='<line class="'+(red?'cycle-edge':'wait-edge')+'" x1="'+(x1+ux*out+bx)+'" y1="'+(y1+uy*out+by)+'" x2="'+(x2-ux*out+bx)+'" y2="'+(y2-uy*out+by)+'" stroke="'+(red?'#b71c1c':'#455a64')+'" stroke-width="'+(red?3:1.6)+'" marker-end="url(#wf-'+(red?'c':'h')+')"><title>'+esc(y.from)+' waits on '+esc(y.to)+' for ['+esc(y.request)+']</title></line>';}
for(const nm of names){const [x,y]=pos[nm];s+='<rect x="'+(x-38)+'" y="'+(y-12)+'" width="76" height="24" rx="5" fill="#f1f8e9" stroke="#558b2f"/><text x="'+x+'" y="'+(y+5)+'" text-anchor="middle" font-size="12">'+esc(nm)+'</text>';}
return s+'</svg>';}
function mark(p,y){const box=$(p+'picture');if(!box||typeof box.querySelector!=='function')return;const svg=box.querySelector('svg');if(!svg)return;
let m=document.getElementById(p+'now-mark');if(!m){m=document.createElementNS('http://www.w3.org/2000/svg','rect');m.id=p+'now-mark';m.setAttribute('x','0');m.setAttribute('height','14');m.setAttribute('fill','#fff59d');m.setAttribute('fill-opacity','0.45');m.setAttribute('pointer-events','none');svg.appendChild(m);}
m.setAttribute('width',svg.getAttribute('width'));m.setAttribute('y',String(y-9));
box.scrollTop=Math.max(0,y-box.clientHeight/2);}
function go(j){k=Math.max(0,Math.min(n-1,j));draw();if(typeof history!=='undefined')history.replaceState(null,'','#event='+(k+1));}
function stop(){if(timer){clearInterval(timer);timer=null;$('play').textContent='▶ play';}}
function play(){if(timer){stop();return;}if(k>=n-1)k=0;$('play').textContent='‖ pause';timer=setInterval(()=>{if(k>=n-1)stop();else go(k+1);},+$('speed').value);}
$('first').onclick=()=>{stop();go(0);};$('back').onclick=()=>{stop();go(k-1);};$('next').onclick=()=>{stop();go(k+1);};$('last').onclick=()=>{stop();go(n-1);};
$('play').onclick=play;slider.oninput=()=>{stop();go(+slider.value);};$('speed').onchange=()=>{if(timer){stop();play();}};
document.addEventListener('keydown',ev=>{if(ev.target.tagName==='INPUT'&&ev.target.type!=='range'||ev.target.tagName==='SELECT')return;
if(ev.key==='ArrowRight'){stop();go(k+1);ev.preventDefault();}else if(ev.key==='ArrowLeft'){stop();go(k-1);ev.preventDefault();}
else if(ev.key==='Home'){stop();go(0);ev.preventDefault();}else if(ev.key==='End'){stop();go(n-1);ev.preventDefault();}
else if(ev.key===' '&&ev.target.tagName!=='BUTTON'){play();ev.preventDefault();}});
const at=typeof location!=='undefined'&&location.hash.match(/event=(\d+)/);if(at)k=Math.max(0,Math.min(n-1,+at[1]-1));
// The picture comes after this script in the page: draw once it is there.
if(document.readyState==='loading')document.addEventListener('DOMContentLoaded',draw);else draw();})();"##;
