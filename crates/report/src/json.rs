//! The `--json` document (schema `report.schema.json`, beside this
//! crate's manifest).

use hdrhistogram::Histogram;
use serde_json::{Map, Value as Json, json};

use crate::hlog::hlog_tags;
use crate::model::{Logged, Report, Value};
use crate::text::SUMMARY;

/// The identifier of the JSON document layout; bump when a field changes
/// meaning or disappears.
pub const SCHEMA_ID: &str = "perfkit-report/1";

/// The JSON schema for `--json` output, documented and tested.
pub const SCHEMA: &str = include_str!("../report.schema.json");

fn summary_json(h: &Histogram<u64>) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("count".into(), json!(h.len()));
    m.insert("min_ns".into(), json!(h.min()));
    m.insert("mean_ns".into(), json!(h.mean()));
    for (name, q) in SUMMARY {
        m.insert(format!("{name}_ns"), json!(h.value_at_quantile(q)));
    }
    m.insert("max_ns".into(), json!(h.max()));
    m.insert("stdev_ns".into(), json!(h.stdev()));
    m
}

/// The JSON document for a report.
pub fn to_json(report: &Report) -> Json {
    let tags = hlog_tags(report);
    let sections: Vec<Json> = report
        .sections
        .iter()
        .zip(&tags)
        .map(|(s, tags)| {
            let rows: Vec<Json> = s
                .rows
                .iter()
                .zip(tags)
                .map(|(r, tag)| {
                    let mut m = Map::new();
                    m.insert("name".into(), json!(r.name));
                    // The row's tag in the `--hlog` file, which is short:
                    // this maps it back to the row.
                    if let Some(tag) = tag {
                        m.insert("hlog_tag".into(), json!(tag));
                        // One interval of a series, not the whole tag: where
                        // it starts in the log.
                        if let (Logged::Interval(_), Some(start)) = (&r.logged, r.start) {
                            m.insert("hlog_start_ns".into(), json!(start.as_nanos() as u64));
                        }
                    }
                    m.insert(
                        "latency".into(),
                        r.latency
                            .as_ref()
                            .map_or(Json::Null, |h| Json::Object(summary_json(h))),
                    );
                    if let Some(e) = r.elapsed {
                        m.insert("elapsed_ns".into(), json!(e.as_nanos() as u64));
                    }
                    for (k, v) in r.columns.iter().chain(&r.json_only) {
                        m.insert(k.clone(), value_json(v));
                    }
                    Json::Object(m)
                })
                .collect();
            json!({ "name": s.name, "rows": rows, "notes": s.notes })
        })
        .collect();
    let mut doc = json!({
        "schema": SCHEMA_ID,
        // Every perfkit crate has the workspace's version: this one's is the
        // tool's.
        "tool": { "name": "perfkit", "version": env!("CARGO_PKG_VERSION") },
        "command": report.command,
        "machine": {
            "cpu_model": report.machine.cpu_model,
            "cores": report.machine.cores,
            "os": report.machine.os,
        },
        "run": {
            "iterations": report.run.iterations,
            "warmup": report.run.warmup,
            "runs": report.run.runs,
            "pinned": report.run.pinned,
            "timing": report.run.timing,
        },
        "sections": sections,
    });
    if !report.summary.is_empty() {
        let summary: Vec<Json> = report
            .summary
            .iter()
            .map(|c| {
                json!({
                    "line": c.line(),
                    "subject": c.subject,
                    "peer": c.peer,
                    "speedup": if c.speedup.is_finite() { json!(c.speedup) } else { Json::Null },
                    "basis": c.basis,
                })
            })
            .collect();
        doc["summary"] = Json::Array(summary);
    }
    doc
}

/// A column's value in JSON: a number that is not finite is `null`, so a
/// numeric column stays numeric for a reader.
fn value_json(v: &Value) -> Json {
    match v {
        Value::Num { value, .. } if value.is_finite() => json!(value),
        Value::Num { .. } => Json::Null,
        Value::Int(i) => json!(i),
        Value::Text(s) => json!(s),
    }
}
