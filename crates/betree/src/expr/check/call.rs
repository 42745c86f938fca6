//! The built-in functions' calls, checked.

use super::{Checker, terr};
use crate::Result;
use crate::domain::{AttrType, article};
use crate::expr::{CapTest, GeoTest, Pred, StrOp};
use crate::parse::{Arg, Lit};

impl Checker<'_> {
    pub(super) fn call(
        &self,
        name: &str,
        col: usize,
        args: &[Arg],
        close_col: usize,
    ) -> Result<Pred> {
        let arity = |sig: &str| {
            terr(
                col,
                format!(
                    "`{name}` takes ({sig}), got {} argument{}",
                    args.len(),
                    if args.len() == 1 { "" } else { "s" }
                ),
            )
        };
        let _ = close_col;
        let int = |a: &Arg, what: &str| match a {
            Arg::Lit(Lit::Int(i), _) => Ok(*i),
            Arg::Lit(l, c) => Err(terr(
                *c,
                format!("`{name}` expects an integer {what}, found {}", l.kind()),
            )),
            Arg::Attr(r) => Err(terr(
                r.col,
                format!(
                    "`{name}` expects an integer {what}, found attribute `{}`",
                    r.name
                ),
            )),
        };
        let num = |a: &Arg, what: &str| match a {
            Arg::Lit(Lit::Int(i), _) => Ok(*i as f64),
            Arg::Lit(Lit::Float(f), _) => Ok(*f),
            Arg::Lit(l, c) => Err(terr(
                *c,
                format!("`{name}` expects a number {what}, found {}", l.kind()),
            )),
            Arg::Attr(r) => Err(terr(
                r.col,
                format!(
                    "`{name}` expects a number {what}, found attribute `{}`",
                    r.name
                ),
            )),
        };
        let string = |a: &Arg, what: &str| match a {
            Arg::Lit(Lit::Str(s), _) => Ok(s.clone()),
            Arg::Lit(l, c) => Err(terr(
                *c,
                format!("`{name}` expects a string {what}, found {}", l.kind()),
            )),
            Arg::Attr(r) => Err(terr(
                r.col,
                format!(
                    "`{name}` expects a string {what}, found attribute `{}`",
                    r.name
                ),
            )),
        };
        let ranged = |a: &Arg, v: i64, what: &str, lo: i64, hi: i64| {
            if (lo..=hi).contains(&v) {
                Ok(v)
            } else {
                Err(terr(
                    arg_col(a),
                    format!("`{name}` expects a {what} in [{lo}, {hi}], found {v}"),
                ))
            }
        };
        match name {
            "within_frequency_cap" => {
                let [k, ns, v, len] = args else {
                    return Err(arity("type, namespace, value, length"));
                };
                let kind = string(k, "cap type")?;
                let kcol = arg_col(k);
                let id = match kind.as_str() {
                    "flight" | "flightip" => self.consts.flight_id.map(|i| (i, "flight_id")),
                    "advertiser" | "advertiserip" => {
                        self.consts.advertiser_id.map(|i| (i, "advertiser_id"))
                    }
                    "campaign" | "campaignip" => {
                        self.consts.campaign_id.map(|i| (i, "campaign_id"))
                    }
                    "product" | "productip" => self.consts.product_id.map(|i| (i, "product_id")),
                    other => {
                        return Err(terr(
                            kcol,
                            format!(
                                "unknown frequency cap type {other:?} (expected flight, flightip, advertiser, advertiserip, campaign, campaignip, product or productip)"
                            ),
                        ));
                    }
                };
                let Some((id, _)) = id else {
                    let c = match kind.trim_end_matches("ip") {
                        "flight" => "flight_id",
                        "advertiser" => "advertiser_id",
                        "campaign" => "campaign_id",
                        _ => "product_id",
                    };
                    return Err(terr(
                        kcol,
                        format!(
                            "a {kind:?} frequency cap needs the constant `{c}` given with the expression"
                        ),
                    ));
                };
                let attr = self.named("frequency_caps", AttrType::FrequencyCaps, col, name)?;
                let now = self.named("now", AttrType::Int, col, name)?;
                Ok(Pred::FreqCap(Box::new(CapTest {
                    attr,
                    now,
                    kind,
                    id,
                    ns: string(ns, "namespace")?,
                    // C passes the value as `uint32_t` and the length as
                    // `size_t`: values it would wrap are refused here.
                    value: ranged(v, int(v, "value")?, "value", 0, u32::MAX.into())?,
                    length: ranged(len, int(len, "length")?, "length", 0, i64::MAX)?,
                })))
            }
            "segment_within" | "segment_before" => {
                let (attr, id, secs) = match args {
                    [Arg::Attr(r), id, s] => {
                        let (aid, ty) = self.attr(r)?;
                        if ty != AttrType::Segments {
                            return Err(terr(
                                r.col,
                                format!(
                                    "`{name}` needs a segments attribute, `{}` is {} attribute",
                                    r.name,
                                    article(ty)
                                ),
                            ));
                        }
                        (aid, id, s)
                    }
                    [id, s] => (
                        self.named("segments_with_timestamp", AttrType::Segments, col, name)?,
                        id,
                        s,
                    ),
                    _ => return Err(arity("[segments attribute,] segment id, seconds")),
                };
                let now = self.named("now", AttrType::Int, col, name)?;
                Ok(Pred::Segment {
                    attr,
                    now,
                    before: name == "segment_before",
                    id: int(id, "segment id")?,
                    // C's `segment_within` takes the seconds as `int32_t`;
                    // within that range the cast is exact.
                    seconds: ranged(
                        secs,
                        int(secs, "number of seconds")?,
                        "number of seconds",
                        i32::MIN.into(),
                        i32::MAX.into(),
                    )? as i32,
                })
            }
            "geo_within_radius" => {
                let [la, lo, km] = args else {
                    return Err(arity("latitude, longitude, radius in km"));
                };
                Ok(Pred::Geo(Box::new(GeoTest {
                    lat: self.named("latitude", AttrType::Float, col, name)?,
                    lon: self.named("longitude", AttrType::Float, col, name)?,
                    clat: num(la, "latitude")?,
                    clon: num(lo, "longitude")?,
                    km: num(km, "radius")?,
                })))
            }
            _ => {
                let op = match name {
                    "contains" => StrOp::Contains,
                    "starts_with" => StrOp::StartsWith,
                    _ => StrOp::EndsWith,
                };
                let [a, s] = args else {
                    return Err(arity("string attribute, string"));
                };
                let Arg::Attr(r) = a else {
                    let Arg::Lit(l, c) = a else { unreachable!() };
                    return Err(terr(
                        *c,
                        format!(
                            "`{name}` expects a string attribute first, found {}",
                            l.kind()
                        ),
                    ));
                };
                let (attr, ty) = self.attr(r)?;
                if ty != AttrType::Str {
                    return Err(terr(
                        r.col,
                        format!(
                            "`{name}` needs a string attribute, `{}` is {} attribute",
                            r.name,
                            article(ty)
                        ),
                    ));
                }
                Ok(Pred::Str {
                    attr,
                    op,
                    s: string(s, "to look for")?.into(),
                })
            }
        }
    }
}

/// The column of a function argument.
fn arg_col(a: &Arg) -> usize {
    match a {
        Arg::Lit(_, c) => *c,
        Arg::Attr(r) => r.col,
    }
}
