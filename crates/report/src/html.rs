//! The HTML report: one self-contained file that works offline.
//!
//! Everything is inline: CSS, SVG charts ([`crate::svg`]) and a small script
//! of our own (legend clicks toggle series, hovering a chart shows values).
//! Nothing is fetched: no external script, style sheet, font or image, and no
//! URL at all in the output (a test checks). Without JavaScript the page
//! shows the same charts and tables; only the interaction is lost.
//!
//! The script ends by setting `data-ok="1"` on `<body>` (and `data-charts`,
//! `data-empty-charts`), and records any error in `data-error`: the headless
//! browser test reads those from the DOM.

use std::fmt::Write;

use flashlab_results::Throughput;

use crate::charts::{self, HALF, WIDE};
use crate::model::{DeviceReport, Report, RunReport, Section};
use crate::svg;
use crate::text::{self, count, dur_f, format_duration_ns, html};

/// The paper figures a latency-over-IO-number chart reproduces.
pub const TIMELINE_FIGURES: &str = "as uFLIP Figures 3-5";
/// The paper figures a latency CDF reproduces.
pub const CDF_FIGURES: &str = "as Chen et al. Figures 2-3, Wang et al. Figure 4";

/// Overlaying more CDFs than this in one chart makes it unreadable.
const MAX_OVERLAID_RUNS: usize = 12;

const CSS: &str = r#"
:root{color-scheme:light}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;color:#222;background:#f4f5f7}
header,main,footer,nav{max-width:1180px;margin:0 auto;padding:0 16px}
header{padding-top:18px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:19px;margin:30px 0 10px;padding-top:10px;border-top:2px solid #d8dbe3}
h3{font-size:16px;margin:18px 0 6px}
h3 small,h4 small{font-weight:normal;color:#555}
h4{font-size:14px;margin:14px 0 4px}
p{margin:6px 0}
nav{font-size:13px}
nav ul{margin:4px 0;padding-left:20px}
nav li{margin:1px 0}
a{color:#1a5fb4}
section.run{background:#fff;border:1px solid #e2e4e8;border-radius:6px;padding:2px 14px 12px;margin:14px 0}
.wrap{overflow-x:auto}
table{border-collapse:collapse;font-size:13px;margin:6px 0 10px;background:#fff}
th,td{padding:3px 8px;border-bottom:1px solid #e6e6e6;text-align:right;white-space:nowrap;vertical-align:top}
th{background:#eef0f4;font-weight:600}
td.l,th.l{text-align:left}
td.w{white-space:normal;min-width:210px;max-width:420px}
table.kv th{text-align:left;width:170px}
table.kv td{text-align:left;white-space:normal;word-break:break-word}
code{font:12px ui-monospace,"DejaVu Sans Mono",monospace;background:#f0f1f4;padding:1px 3px;border-radius:3px}
.grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(480px,1fr));gap:12px;align-items:start}
figure{margin:8px 0}
svg.chart{width:100%;height:auto;display:block;border:1px solid #e2e4e8;border-radius:4px;background:#fff}
g.lg{cursor:pointer}
g.lg:focus{outline:1px dotted #333}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:6px;vertical-align:-1px}
.note{color:#8a4b00}
.muted{color:#666}
details{margin:6px 0}
ul.verdict{font-size:15px;font-weight:600;margin:8px 0 12px}
figcaption{font-size:12px;margin:2px 0 0}
pre{font:12px ui-monospace,"DejaVu Sans Mono",monospace;background:#f6f7f9;padding:8px;overflow-x:auto}
#tip{position:absolute;pointer-events:none;background:rgba(255,255,255,.96);border:1px solid #999;border-radius:4px;padding:4px 7px;font:12px/1.35 ui-monospace,"DejaVu Sans Mono",monospace;white-space:pre;box-shadow:0 1px 4px rgba(0,0,0,.2);z-index:10}
footer{color:#666;font-size:12px;padding:24px 16px 40px}
"#;

/// Our only script. Kept small and dependency-free; every failure is caught
/// and recorded on <body> so that the browser test sees it.
const JS: &str = r##"
(function(){
"use strict";
var body=document.body;
window.addEventListener("error",function(e){body.setAttribute("data-error",String(e.message||e));});
function inv(spec,p){var a=spec.split(" "),lo=+a[1],hi=+a[2],p0=+a[3],p1=+a[4],t=(p-p0)/(p1-p0);
 if(a[0]==="log"){var l=Math.log(lo)/Math.LN10,h=Math.log(hi)/Math.LN10;return Math.pow(10,l+t*(h-l));}
 return lo+t*(hi-lo);}
function sig(v){return v>=100?v.toFixed(0):v>=10?v.toFixed(1):v.toFixed(2);}
function fmt(v,u){
 if(u==="ns"){if(v<1e3)return v.toFixed(0)+"ns";if(v<1e6)return sig(v/1e3)+"us";if(v<1e9)return sig(v/1e6)+"ms";return sig(v/1e9)+"s";}
 if(u==="frac")return (v*100).toFixed(1)+"%";
 if(u==="count")return Math.round(v).toLocaleString("en-US");
 if(u==="bytes"){if(v<1024)return v.toFixed(0)+"B";if(v<1048576)return sig(v/1024)+"KiB";if(v<1073741824)return sig(v/1048576)+"MiB";return sig(v/1073741824)+"GiB";}
 return sig(v);}
function parse(s){var out=[];s.trim().split(/\s+/).forEach(function(p){var q=p.split(",");out.push([+q[0],+q[1]]);});return out;}
function nearest(pts,x){var lo=0,hi=pts.length-1;if(hi<0)return -1;
 while(hi-lo>1){var m=(lo+hi)>>1;if(pts[m][0]<x)lo=m;else hi=m;}
 return Math.abs(pts[lo][0]-x)<=Math.abs(pts[hi][0]-x)?lo:hi;}
try{
 var tip=document.getElementById("tip");
 var charts=document.querySelectorAll("svg.chart"),empty=0;
 Array.prototype.forEach.call(charts,function(svg){
  var series=svg.querySelectorAll("g.series"),drawn=false;
  Array.prototype.forEach.call(series,function(g){var b=g.getBBox();if(b.width>0||b.height>0)drawn=true;});
  if(!drawn)empty++;
  Array.prototype.forEach.call(svg.querySelectorAll("g.lg"),function(lg){
   function toggle(){var s=lg.getAttribute("data-s"),on=lg.getAttribute("aria-pressed")!=="false";
    lg.setAttribute("aria-pressed",on?"false":"true");lg.style.opacity=on?"0.35":"1";
    Array.prototype.forEach.call(svg.querySelectorAll('g.series[data-s="'+s+'"]'),function(g){g.style.display=on?"none":"";});}
   lg.addEventListener("click",toggle);
   lg.addEventListener("keydown",function(e){if(e.key==="Enter"||e.key===" "){e.preventDefault();toggle();}});
  });
  var xs=svg.getAttribute("data-x"),ys=svg.getAttribute("data-y"),xu=svg.getAttribute("data-xu"),yu=svg.getAttribute("data-yu");
  var xa=xs.split(" "),ya=ys.split(" "),left=+xa[3],right=+xa[4],bottom=+ya[3],top=+ya[4];
  var xh=svg.querySelector("line.xh"),xc=svg.getAttribute("data-xcat");xc=xc?xc.split("|"):null;
  function fx(v){if(xc){var i=Math.round(v);return i>=0&&i<xc.length?xc[i]:"";}return fmt(v,xu);}
  function hide(){tip.hidden=true;if(xh)xh.setAttribute("visibility","hidden");}
  svg.addEventListener("mouseleave",hide);
  svg.addEventListener("mousemove",function(e){
   var m=svg.getScreenCTM();if(!m)return;
   var pt=svg.createSVGPoint();pt.x=e.clientX;pt.y=e.clientY;pt=pt.matrixTransform(m.inverse());
   if(pt.x<left||pt.x>right||pt.y<top||pt.y>bottom){hide();return;}
   if(xh){xh.setAttribute("x1",pt.x);xh.setAttribute("x2",pt.x);xh.setAttribute("visibility","visible");}
   var lines=["x "+fx(inv(xs,pt.x))+"   y "+fmt(inv(ys,pt.y),yu)];
   Array.prototype.forEach.call(series,function(g){
    if(g.style.display==="none")return;var pl=g.querySelector("polyline");if(!pl)return;
    var pts=pl._pts||(pl._pts=parse(pl.getAttribute("points")));var k=nearest(pts,pt.x);if(k<0)return;
    var name=g.getAttribute("data-label")||"value";
    lines.push(name+": "+fmt(inv(ys,pts[k][1]),yu)+" at "+fx(inv(xs,pts[k][0])));});
   tip.textContent=lines.join("\n");tip.hidden=false;
   tip.style.left=(e.pageX+14)+"px";tip.style.top=(e.pageY+14)+"px";});
 });
 // "save SVG / PNG" under each chart: the files are made here from the
 // chart's own SVG (data: URIs; the page still reaches nothing outside).
 // Methods named "...URL" are called by index so that the page's text has
 // no CSS-style url-call token (the self-containment test forbids it).
 function svgData(svg){return "data:image/svg+xml;charset=utf-8,"+encodeURIComponent(new XMLSerializer().serializeToString(svg));}
 function give(href,name){var l=document.createElement("a");l.href=href;l.download=name;body.appendChild(l);l.click();l.remove();}
 function saveChart(a){var svg=document.getElementById(a.getAttribute("data-chart"));if(!svg)return;
  var fmt=a.getAttribute("data-fmt"),name=(svg.id||"chart")+"."+fmt,data=svgData(svg);
  if(fmt==="svg"){give(data,name);return;}
  var w=+svg.getAttribute("width"),h=+svg.getAttribute("height"),k=2,im=new Image();
  im.onload=function(){var cv=document.createElement("canvas");cv.width=w*k;cv.height=h*k;
   var g=cv.getContext("2d");g.scale(k,k);g.drawImage(im,0,0,w,h);give(cv["toData"+"URL"]("image/png"),name);};
  im["src"]=data;}
 Array.prototype.forEach.call(document.querySelectorAll("a.save"),function(a){
  a.addEventListener("click",function(e){e.preventDefault();saveChart(a);});});
 body.setAttribute("data-save-links",String(document.querySelectorAll("a.save").length));
 // Self-test for the headless browser test (file:///...#selftest): hover the
 // middle of the first chart with a legend, then click its first legend entry.
 if(location.hash==="#selftest"){
  var svg=Array.prototype.filter.call(charts,function(c){return c.querySelector("g.lg");})[0];
  if(svg){var r=svg.querySelector("rect.plot").getBoundingClientRect();
   svg.dispatchEvent(new MouseEvent("mousemove",{clientX:r.left+r.width/2,clientY:r.top+r.height/2,bubbles:true}));
   var shown=tip.hidden?"":tip.textContent;
   svg.querySelector("g.lg").dispatchEvent(new MouseEvent("click",{bubbles:true}));
   var off=svg.querySelectorAll('g.series[style*="none"]').length;
   body.setAttribute("data-selftest-tip",shown.replace(/\n/g," | "));
   body.setAttribute("data-selftest-hidden",String(off));
   // What "save SVG" would write: a standalone SVG document (namespace
   // included by the serializer), as a data URI.
   body.setAttribute("data-selftest-svg",svgData(svg).slice(0,200));}
 }
 body.setAttribute("data-charts",String(charts.length));
 body.setAttribute("data-empty-charts",String(empty));
 body.setAttribute("data-ok","1");
}catch(err){body.setAttribute("data-error",String(err&&err.message||err));}
})();
"##;

/// Renders the whole report as one HTML document.
pub fn render(r: &Report) -> String {
    let mut o = String::with_capacity(64 * 1024);
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"generator\" content=\"{gen}\"><title>{title}</title><style>{CSS}</style></head>\n<body>\n",
        gen = html(&r.generator),
        title = html(&r.title)
    );
    let runs: usize = r.devices.iter().map(|d| d.runs.len()).sum();
    if r.devices.is_empty() {
        // A report of no results directory (a sweep's table, a twin, the
        // scoreboard): no device or run count to give.
        let _ = writeln!(o, "<header><h1>{}</h1></header>", html(&r.title));
    } else {
        let _ = writeln!(
            o,
            "<header><h1>{}</h1><p class=\"muted\">{} device{}, {} run{}. Statistics use every record; long series are downsampled for display only.</p></header>",
            html(&r.title),
            r.devices.len(),
            plural(r.devices.len()),
            runs,
            plural(runs)
        );
    }
    toc(&mut o, r);
    o.push_str("<main>\n");
    if !r.comparisons.is_empty() || r.devices.len() > 1 {
        comparison(&mut o, r);
    }
    for (di, d) in r.devices.iter().enumerate() {
        device(&mut o, di, d);
    }
    // A report of no device (the `flashlab validate` scoreboard): its
    // sections alone.
    if r.devices.is_empty() {
        for s in &r.sections {
            section(&mut o, "page", s);
        }
    }
    o.push_str("</main>\n");
    let _ = write!(
        o,
        "<footer>Rendered by {} from saved results only{}. \
         This page is self-contained and works offline.</footer>\n<div id=\"tip\" hidden></div>\n<script>{JS}</script>\n</body></html>\n",
        html(&r.generator),
        if r.devices.is_empty() {
            ""
        } else {
            " (manifest.json, run.json, records.bin)"
        }
    );
    o
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn toc(o: &mut String, r: &Report) {
    // Folded: the first screen is the result, not a table of contents.
    o.push_str("<nav><details><summary><b>Contents</b></summary><ul>");
    if r.devices.len() > 1 {
        let _ = write!(
            o,
            "<li><a href=\"#compare\">Device comparison</a> ({} shared runs)",
            r.comparisons.len()
        );
        if !r.sections.is_empty() {
            o.push_str("<ul>");
            for s in &r.sections {
                let _ = write!(
                    o,
                    "<li><a href=\"#cmp-{}\">{}</a></li>",
                    text::slug(&s.id),
                    html(&s.title)
                );
            }
            o.push_str("</ul>");
        }
        o.push_str("</li>");
    }
    for (di, d) in r.devices.iter().enumerate() {
        let _ = write!(
            o,
            "<li><span class=\"sw\" style=\"background:{}\"></span><a href=\"#d{}\">Device: {}</a><ul>",
            svg::color(d.color),
            di + 1,
            html(&d.label)
        );
        let _ = write!(o, "<li><a href=\"#d{}-prov\">Provenance</a></li>", di + 1);
        for s in &d.sections {
            let _ = write!(
                o,
                "<li><a href=\"#d{}-{}\">{}</a></li>",
                di + 1,
                text::slug(&s.id),
                html(&s.title)
            );
        }
        // A suite has hundreds of runs: fold their links away.
        let many = d.runs.len() > 24;
        let _ = write!(o, "<li><a href=\"#d{}-runs\">Runs</a>", di + 1);
        if many {
            let _ = write!(o, " <details><summary>{} runs</summary>", d.runs.len());
        } else {
            o.push_str(": ");
        }
        for (ri, run) in d.runs.iter().enumerate() {
            if ri > 0 {
                o.push_str(", ");
            }
            let _ = write!(
                o,
                "<a href=\"#d{}-r{}\">{}</a>",
                di + 1,
                ri + 1,
                html(&run.name)
            );
        }
        if many {
            o.push_str("</details>");
        }
        o.push_str("</li></ul></li>");
    }
    o.push_str("</ul></details></nav>\n");
}

fn swatch(color: usize) -> String {
    format!(
        "<span class=\"sw\" style=\"background:{}\"></span>",
        svg::color(color)
    )
}

fn comparison(o: &mut String, r: &Report) {
    o.push_str("<section id=\"compare\"><h2>Device comparison</h2>\n<p>");
    for d in &r.devices {
        let _ = write!(o, "{}{} &nbsp; ", swatch(d.color), html(&d.label));
    }
    o.push_str("</p>\n");
    let verdicts = r.verdicts();
    if !verdicts.is_empty() {
        o.push_str("<ul class=\"verdict\">");
        for v in &verdicts {
            let _ = write!(o, "<li>{}</li>", html(v));
        }
        o.push_str("</ul>\n");
    }
    for s in &r.sections {
        section(o, "cmp", s);
    }
    if r.comparisons.is_empty() {
        o.push_str("<p class=\"note\">These results directories have no run name in common, so there is nothing to put side by side; each device is shown below.</p></section>\n");
        return;
    }
    o.push_str("<div class=\"wrap\"><table><tr><th class=\"l\">run</th><th class=\"l\">device</th><th class=\"l\">workload</th><th>IOs</th><th>mean</th><th>p50</th><th>p99</th><th>p99.9</th><th>max</th><th>IOPS</th><th>MB/s</th></tr>\n");
    for (ci, c) in r.comparisons.iter().enumerate() {
        for (k, &(di, ri)) in c.entries.iter().enumerate() {
            let d = &r.devices[di];
            let run = &d.runs[ri];
            let t = &run.stats.all;
            let _ = writeln!(
                o,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}{}</td><td class=\"l w\">{}</td><td>{}</td>{}</tr>",
                match (k, c.charted) {
                    (0, true) => format!("<a href=\"#cmp{}\">{}</a>", ci + 1, html(&c.run)),
                    (0, false) => html(&c.run),
                    _ => String::new(),
                },
                swatch(d.color),
                html(&d.label),
                html(&run.description),
                count(t.ios),
                lat_cells(t, &["mean", "p50", "p99", "p999", "max"]) + &rate_cells(t)
            );
        }
    }
    o.push_str("</table></div>\n");
    let uncharted = r.comparisons.iter().filter(|c| !c.charted).count();
    if uncharted > 0 {
        let _ = writeln!(
            o,
            "<p class=\"muted\">{} shared runs: the table lists them all; side-by-side charts are drawn for {} of them (the suite's featured runs), and each device's own section below has every run's charts.</p>",
            r.comparisons.len(),
            r.comparisons.len() - uncharted
        );
    }
    for (ci, c) in r.comparisons.iter().enumerate() {
        if !c.charted {
            continue;
        }
        // Ids by position: run names may differ only in characters an id cannot hold.
        let _ = writeln!(
            o,
            "<h3 id=\"cmp{}\">Run {} on {} devices</h3>",
            ci + 1,
            html(&c.run),
            c.entries.len()
        );
        let curves: Vec<(String, usize, &[crate::scan::CdfPoint])> = c
            .entries
            .iter()
            .map(|&(di, ri)| {
                let d = &r.devices[di];
                (d.label.clone(), d.color, d.runs[ri].cdf.as_slice())
            })
            .collect();
        let chart = charts::cdf(
            &format!("cmp{}-cdf", ci + 1),
            &format!("Latency CDF of run {} on each device", c.run),
            &curves,
            WIDE,
        );
        figure_as(o, &chart, Some(CDF_FIGURES));
        // Side by side, on one latency scale so that heights compare.
        let extent = c
            .entries
            .iter()
            .filter_map(|&(di, ri)| charts::timeline_extent(&r.devices[di].runs[ri].timeline))
            .fold(None, |acc: Option<(f64, f64)>, (lo, hi)| {
                Some(acc.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))))
            });
        o.push_str("<div class=\"grid2\">");
        for &(di, ri) in &c.entries {
            let d = &r.devices[di];
            let run = &d.runs[ri];
            let chart = charts::timeline(
                &format!("cmp{}-tl-d{}", ci + 1, di + 1),
                &format!("Latency over IO number, run {} on {}", c.run, d.label),
                run,
                d.color,
                Some(&d.label),
                extent,
                HALF,
            );
            figure_as(o, &chart, Some(TIMELINE_FIGURES));
        }
        o.push_str("</div>\n");
    }
    o.push_str("</section>\n");
}

fn figure(o: &mut String, chart: &svg::Chart) {
    figure_as(o, chart, None);
}

/// A chart, the paper figures it reproduces (under it, so that its title
/// fits on one line), and links that save it as SVG or PNG (the page's
/// script makes the files from the chart itself: no network).
fn figure_as(o: &mut String, chart: &svg::Chart, reproduces: Option<&str>) {
    o.push_str("<figure>");
    o.push_str(&svg::render(chart));
    o.push_str("<figcaption class=\"muted\">");
    if let Some(r) = reproduces {
        let _ = write!(o, "{} &middot; ", html(r));
    }
    let _ = write!(
        o,
        "save <a href=\"#\" class=\"save\" data-chart=\"{id}\" data-fmt=\"svg\">SVG</a> <a href=\"#\" class=\"save\" data-chart=\"{id}\" data-fmt=\"png\">PNG</a></figcaption>",
        id = html(&chart.id)
    );
    o.push_str("</figure>\n");
}

fn lat_cells(t: &Throughput, which: &[&str]) -> String {
    let l = &t.latency;
    let mut s = String::new();
    for w in which {
        let v = match *w {
            "mean" => dur_f(l.mean_ns),
            "min" => format_duration_ns(l.min_ns),
            "p50" => format_duration_ns(l.p50_ns),
            "p90" => format_duration_ns(l.p90_ns),
            "p99" => format_duration_ns(l.p99_ns),
            "p999" => format_duration_ns(l.p999_ns),
            _ => format_duration_ns(l.max_ns),
        };
        if t.ios == 0 {
            s.push_str("<td>-</td>");
        } else {
            let _ = write!(s, "<td>{v}</td>");
        }
    }
    s
}

fn rate_cells(t: &Throughput) -> String {
    if t.ios == 0 {
        return "<td>-</td><td>-</td>".into();
    }
    format!("<td>{:.0}</td><td>{:.1}</td>", t.iops, t.mb_per_s)
}

fn kv(o: &mut String, k: &str, v: &str) {
    let _ = write!(o, "<tr><th>{}</th><td>{v}</td></tr>", html(k));
}

fn device(o: &mut String, di: usize, d: &DeviceReport) {
    let n = di + 1;
    let _ = writeln!(
        o,
        "<section class=\"device\" id=\"d{n}\"><h2>{}Device: {}</h2>",
        swatch(d.color),
        html(&d.label)
    );
    for s in &d.sections {
        section(o, &format!("d{n}"), s);
    }

    let _ = writeln!(o, "<h3 id=\"d{n}-runs\">Runs</h3>");
    runs_table(o, n, d);

    let with_data: Vec<(usize, &RunReport)> = d
        .runs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.has_data())
        .collect();
    if with_data.len() > 1 && with_data.len() <= MAX_OVERLAID_RUNS {
        let curves: Vec<(String, usize, &[crate::scan::CdfPoint])> = with_data
            .iter()
            .map(|(ri, run)| (run.name.clone(), *ri, run.cdf.as_slice()))
            .collect();
        let chart = charts::cdf(
            &format!("d{n}-cdf"),
            &format!("Latency CDFs of every run on {}", d.label),
            &curves,
            WIDE,
        );
        figure_as(o, &chart, Some(CDF_FIGURES));
    } else if with_data.len() > MAX_OVERLAID_RUNS {
        let _ = writeln!(
            o,
            "<p class=\"muted\">{} runs: too many to overlay in one CDF; each run has its own below.</p>",
            with_data.len()
        );
    }

    // The result first; where it came from below, folded.
    let _ = write!(
        o,
        "<details id=\"d{n}-prov\"><summary><b>Provenance</b> <span class=\"muted\">(command line, tool, host, device identity)</span></summary>\n<div class=\"grid2\"><table class=\"kv\">"
    );
    for (k, v) in d.provenance_rows() {
        let v = if k == "command line" || k == "results directory" {
            format!("<code>{}</code>", html(&v))
        } else {
            html(&v)
        };
        kv(o, k, &v);
    }
    o.push_str("</table>\n<table class=\"kv\"><tr><th>identity</th><td class=\"muted\">as recorded in the manifest</td></tr>");
    for (k, v) in &d.provenance.device.identity {
        kv(o, k, &html(v));
    }
    o.push_str("</table></div></details>\n");

    for (ri, run) in d.runs.iter().enumerate() {
        run_section(o, n, ri, d, run);
    }
    o.push_str("</section>\n");
}

fn runs_table(o: &mut String, n: usize, d: &DeviceReport) {
    o.push_str("<div class=\"wrap\"><table><tr><th class=\"l\">run</th><th class=\"l\">workload</th><th class=\"l\">status</th><th>IOs</th><th>ignored</th><th>failed</th><th>mean</th><th>min</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th><th>IOPS</th><th>MB/s</th></tr>\n");
    const ALL: [&str; 7] = ["mean", "min", "p50", "p90", "p99", "p999", "max"];
    for (ri, run) in d.runs.iter().enumerate() {
        let s = &run.stats;
        let _ = writeln!(
            o,
            "<tr><td class=\"l\"><a href=\"#d{n}-r{}\">{}</a></td><td class=\"l w\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td>{}{}</tr>",
            ri + 1,
            html(&run.name),
            html(&run.description),
            run.status.name(),
            count(s.all.ios),
            count(s.ios_ignored),
            count(s.ios_failed),
            lat_cells(&s.all, &ALL),
            rate_cells(&s.all)
        );
        for (mode, t) in &s.by_mode {
            let _ = writeln!(
                o,
                "<tr><td class=\"l muted\">&nbsp;&nbsp;{}</td><td class=\"l muted\">{} IOs only</td><td></td><td>{}</td><td></td><td></td>{}{}</tr>",
                html(mode),
                html(mode),
                count(t.ios),
                lat_cells(t, &ALL),
                rate_cells(t)
            );
        }
    }
    o.push_str("</table></div>\n");
}

fn run_section(o: &mut String, n: usize, ri: usize, d: &DeviceReport, run: &RunReport) {
    let id = format!("d{n}-r{}", ri + 1);
    let _ = writeln!(
        o,
        "<section class=\"run\" id=\"{id}\"><h3>Run {} <small>{} &middot; {}</small></h3>",
        html(&run.name),
        html(&run.description),
        run.status.name()
    );
    if let Some(e) = &run.error {
        let _ = writeln!(o, "<p class=\"note\">error: {}</p>", html(e));
    }
    for note in &run.notes {
        let _ = writeln!(o, "<p class=\"note\">{}</p>", html(note));
    }
    if run.has_data() {
        let t = &run.stats.all;
        let _ = writeln!(
            o,
            "<p class=\"muted\">{} records: {} measured, {} warm-up (IOIgnore), {} failed. Statistics use all of them; the time series shows {}.</p>",
            count(run.records),
            count(t.ios),
            count(run.stats.ios_ignored),
            count(run.stats.ios_failed),
            if run.timeline.bucket_ios > 1 {
                format!("the min, max and mean of each {} consecutive IOs", count(run.timeline.bucket_ios))
            } else {
                "every IO".into()
            }
        );
        if let Some(p) = &run.phases {
            let mut parts = Vec::new();
            if let Some(s) = p.startup_ios {
                parts.push(format!("start-up phase {} IOs", count(s)));
            }
            if let Some(per) = p.period_ios {
                parts.push(format!("running-phase period {} IOs", count(per)));
            }
            let _ = writeln!(
                o,
                "<p>Phases (uFLIP section 4.2): {}.</p>",
                html(&parts.join(", "))
            );
        }
        let chart = charts::timeline(
            &format!("{id}-tl"),
            &format!("Latency over IO number, run {} on {}", run.name, d.label),
            run,
            d.color,
            None,
            None,
            WIDE,
        );
        figure_as(o, &chart, Some(TIMELINE_FIGURES));
        o.push_str("<div class=\"grid2\">");
        let cdf = charts::cdf(
            &format!("{id}-cdf"),
            &format!("Latency CDF, run {}", run.name),
            &[(run.name.clone(), d.color, run.cdf.as_slice())],
            HALF,
        );
        figure_as(o, &cdf, Some(CDF_FIGURES));
        let hist = charts::histogram(
            &format!("{id}-hist"),
            &format!("Latency histogram, run {}", run.name),
            "",
            &run.histogram,
            d.color,
            HALF,
        );
        figure(o, &hist);
        o.push_str("</div>\n");
    }
    if let Some(ds) = &run.device_stats {
        let _ = writeln!(
            o,
            "<details><summary>Device accounting (from run.json)</summary><pre>{}</pre></details>",
            html(&serde_json::to_string_pretty(ds).unwrap_or_default())
        );
    }
    o.push_str("</section>\n");
}

fn section(o: &mut String, prefix: &str, s: &Section) {
    let _ = writeln!(
        o,
        "<h3 id=\"{prefix}-{}\">{}</h3>",
        text::slug(&s.id),
        html(&s.title)
    );
    for p in &s.paragraphs {
        let _ = writeln!(o, "<p>{}</p>", html(p));
    }
    for t in &s.tables {
        o.push_str("<div class=\"wrap\"><table><tr>");
        for h in &t.header {
            let _ = write!(o, "<th class=\"l\">{}</th>", html(h));
        }
        o.push_str("</tr>\n");
        for row in &t.rows {
            o.push_str("<tr>");
            for c in row {
                // Sentences wrap; short cells (numbers, names) do not.
                let class = if c.chars().count() > 40 { "l w" } else { "l" };
                let _ = write!(o, "<td class=\"{class}\">{}</td>", html(c));
            }
            o.push_str("</tr>\n");
        }
        o.push_str("</table></div>\n");
    }
    let mut in_grid = false;
    for (ci, c) in s.charts.iter().enumerate() {
        // Chart ids must be unique in the page: prefix them with the device and section.
        let mut c = c.clone();
        c.id = format!(
            "{prefix}-{}-c{}-{}",
            text::slug(&s.id),
            ci + 1,
            text::slug(&c.id)
        );
        if c.width <= HALF.0 {
            // Half-width charts two to a row, as the paper figures are.
            if !in_grid {
                o.push_str("<div class=\"grid2\">");
                in_grid = true;
            }
        } else if in_grid {
            o.push_str("</div>\n");
            in_grid = false;
        }
        figure(o, &c);
    }
    if in_grid {
        o.push_str("</div>\n");
    }
}
