//! `convert-timezone`: converts a date and time between time zones with the IANA database
//! (`chrono-tz`), daylight-saving changes included.

use chrono::{DateTime, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, Offset, SecondsFormat, TimeZone, Utc};
use chrono_tz::{OffsetComponents, TZ_VARIANTS, Tz};
use tool_core::prelude::*;

/// Longest accepted `time`, in characters.
pub const MAX_TIME_CHARS: usize = 64;
/// Longest accepted time zone name, in characters.
pub const MAX_TIMEZONE_CHARS: usize = 64;

/// Refuses an argument longer than `limit` characters before it is parsed or compared.
fn check_length(what: &str, text: &str, limit: usize) -> Result<(), ToolError> {
    let chars = text.chars().count();
    if chars > limit {
        return Err(ToolError::new(format!("{what} is {chars} characters long; the limit is {limit}.")));
    }
    Ok(())
}

/// A moment as the clocks of one time zone show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ZonedTime {
    /// The time zone: an IANA name, or the UTC offset when the input had only an offset.
    pub timezone: String,
    /// The moment in RFC 3339, with this zone's offset.
    pub datetime: String,
    /// Wall-clock time, `YYYY-MM-DD HH:MM:SS`.
    pub local: String,
    /// Day of the week.
    pub weekday: String,
    /// UTC offset in effect, e.g. `+09:00`.
    pub utc_offset: String,
    /// Zone abbreviation in effect, e.g. `KST` or `PDT` (some zones only have the offset).
    pub abbreviation: String,
    /// Whether daylight-saving time is in effect (absent for a bare UTC offset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub daylight_saving: Option<bool>,
}

/// The result of a conversion.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TimezoneConversion {
    /// The moment in the source zone.
    pub source: ZonedTime,
    /// The same moment in the target zone.
    pub target: ZonedTime,
    /// The same moment in UTC, RFC 3339.
    pub utc: String,
    /// How many hours the target's clocks are ahead of the source's at this moment (negative
    /// if behind).
    pub hours_ahead: f64,
    /// Anything worth knowing about the conversion (e.g. an ambiguous local time).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Finds a zone by IANA name (any case), or by a city that names exactly one zone (`Seoul`,
/// `new york`); otherwise lists the closest names.
pub fn resolve_timezone(name: &str) -> Result<Tz, ToolError> {
    let trimmed = name.trim();
    if let Ok(tz) = trimmed.parse::<Tz>() {
        return Ok(tz);
    }
    let key = trimmed.replace(' ', "_").to_lowercase();
    if let Some(tz) = TZ_VARIANTS.iter().find(|tz| tz.name().to_lowercase() == key) {
        return Ok(*tz);
    }
    let city = |tz: &Tz| tz.name().rsplit('/').next().unwrap_or_default().to_lowercase();
    let by_city: Vec<Tz> = TZ_VARIANTS.iter().filter(|tz| city(tz) == key).copied().collect();
    if let [tz] = by_city.as_slice() {
        return Ok(*tz);
    }
    let mut scored: Vec<(f64, &str)> = TZ_VARIANTS
        .iter()
        .map(|tz| {
            let whole = strsim::jaro_winkler(&key, &tz.name().to_lowercase());
            (whole.max(strsim::jaro_winkler(&key, &city(tz))), tz.name())
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let closest: Vec<String> = scored.iter().take(5).map(|(_, n)| format!("`{n}`")).collect();
    Err(ToolError::with_details(
        format!(
            "Unknown time zone `{trimmed}`. Use an IANA name such as `Asia/Seoul` or `America/New_York` (abbreviations like PST are ambiguous). Closest names: {}.",
            closest.join(", ")
        ),
        json!({ "closest": scored.iter().take(5).map(|(_, n)| *n).collect::<Vec<_>>() }),
    ))
}

/// A parsed `time` argument.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Moment {
    /// An instant: the text had a UTC offset (or was `now`).
    Instant(DateTime<FixedOffset>),
    /// A wall-clock time, to be read in the source zone.
    Local(NaiveDateTime),
}

fn parse_time(text: &str) -> Result<Moment, ToolError> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("now") {
        return Ok(Moment::Instant(Utc::now().fixed_offset()));
    }
    // Accept a space instead of `T`, and `Z` for a bare `HH:MM` time.
    let t_form = match t.as_bytes().get(10) {
        Some(b' ') => format!("{}T{}", &t[..10], &t[11..]),
        _ => t.to_owned(),
    };
    if let Ok(dt) = DateTime::parse_from_rfc3339(&t_form) {
        return Ok(Moment::Instant(dt));
    }
    let z_form = t_form
        .strip_suffix(['Z', 'z'])
        .map(|s| format!("{s}+00:00"))
        .unwrap_or(t_form.clone());
    if let Ok(dt) = DateTime::parse_from_str(&z_form, "%Y-%m-%dT%H:%M%#z") {
        return Ok(Moment::Instant(dt));
    }
    for fmt in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
        if let Ok(naive) = NaiveDateTime::parse_from_str(&t_form, fmt) {
            return Ok(Moment::Local(naive));
        }
    }
    if let Ok(date) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        return Ok(Moment::Local(date.and_time(chrono::NaiveTime::MIN)));
    }
    Err(ToolError::new(format!(
        "Cannot read the time `{t}`. Use ISO 8601: `2024-03-10T09:30:00` (a wall-clock time in from_timezone), `2024-03-10T09:30:00+09:00` or `...Z` (an exact instant), `2024-03-10` (midnight), or `now`."
    )))
}

/// The moment as zone `Z` shows it, and the zone's UTC offset in seconds.
fn zoned<Z: TimeZone>(dt: &DateTime<Z>, timezone: String, daylight_saving: Option<bool>) -> (ZonedTime, i32)
where
    Z::Offset: std::fmt::Display,
{
    let zoned = ZonedTime {
        timezone,
        datetime: dt.to_rfc3339_opts(SecondsFormat::AutoSi, false),
        local: dt.format("%Y-%m-%d %H:%M:%S").to_string(),
        weekday: dt.format("%A").to_string(),
        utc_offset: dt.format("%:z").to_string(),
        abbreviation: dt.format("%Z").to_string(),
        daylight_saving,
    };
    (zoned, dt.offset().fix().local_minus_utc())
}

fn in_zone(instant: &DateTime<Utc>, tz: Tz) -> (ZonedTime, i32) {
    let dt = instant.with_timezone(&tz);
    let dst = !dt.offset().dst_offset().is_zero();
    zoned(&dt, tz.name().to_owned(), Some(dst))
}

/// Converts `time` (read in `from` when it has no offset) to the zone `to`.
pub fn convert(time: &str, from: Option<&str>, to: &str) -> Result<TimezoneConversion, ToolError> {
    check_length("time", time, MAX_TIME_CHARS)?;
    check_length("to_timezone", to, MAX_TIMEZONE_CHARS)?;
    if let Some(from) = from {
        check_length("from_timezone", from, MAX_TIMEZONE_CHARS)?;
    }
    let target_tz = resolve_timezone(to)?;
    let source_tz = from.map(resolve_timezone).transpose()?;
    let mut note = None;
    let (instant, (source, source_offset)) = match (parse_time(time)?, source_tz) {
        (Moment::Instant(dt), Some(tz)) => (dt.with_timezone(&Utc), in_zone(&dt.with_timezone(&Utc), tz)),
        (Moment::Instant(dt), None) => (dt.with_timezone(&Utc), zoned(&dt, dt.format("%:z").to_string(), None)),
        (Moment::Local(_), None) => {
            return Err(ToolError::new(format!(
                "The time `{}` has no UTC offset, so from_timezone is needed to know which clock it is read on (e.g. `Europe/Paris`). Or add an offset: `{}+01:00`.",
                time.trim(),
                time.trim()
            )));
        }
        (Moment::Local(naive), Some(tz)) => {
            let dt = match tz.from_local_datetime(&naive) {
                LocalResult::Single(dt) => dt,
                LocalResult::Ambiguous(earlier, later) => {
                    note = Some(format!(
                        "{naive} happens twice in {} (clocks go back): the earlier one ({}) was used; the later one is {}.",
                        tz.name(),
                        earlier.format("%:z %Z"),
                        later.to_rfc3339_opts(SecondsFormat::AutoSi, false)
                    ));
                    earlier
                }
                LocalResult::None => {
                    return Err(ToolError::new(format!(
                        "{naive} does not exist in {}: the clocks skip it when daylight-saving time starts. Use a time outside the skipped hour.",
                        tz.name()
                    )));
                }
            };
            let utc = dt.with_timezone(&Utc);
            (utc, in_zone(&utc, tz))
        }
    };
    let (target, target_offset) = in_zone(&instant, target_tz);
    let hours_ahead = f64::from(target_offset - source_offset) / 3600.0;
    Ok(TimezoneConversion {
        source,
        target,
        utc: instant.to_rfc3339_opts(SecondsFormat::AutoSi, true),
        hours_ahead,
        note,
    })
}

/// Convert a date and time from one time zone to another, daylight-saving time included
///
/// Time zones are IANA names (`Asia/Seoul`, `America/Los_Angeles`, `UTC`); a city that names
/// exactly one zone (`Seoul`, `New York`) is accepted too. Limits: `time` and each zone name
/// are at most 64 characters.
// Found by tool search (`serve --tool-search`) rather than listed up front.
#[tool(id = "convert-timezone", tags = ["time", "offline"], defer_loading, mcp(read_only_hint = true, open_world_hint = false))]
pub async fn convert_timezone(
    /// The time: `2024-03-10T09:30:00` (a wall-clock time in `from_timezone`),
    /// `2024-03-10T09:30:00+09:00` or `2024-03-10T00:30:00Z` (an exact instant), `2024-03-10`
    /// (midnight), or `now`.
    time: String,
    /// The zone to convert to.
    to_timezone: String,
    /// The zone `time` is read in. Required when `time` has no UTC offset.
    from_timezone: Option<String>,
) -> Result<TimezoneConversion, ToolError> {
    convert(&time, from_timezone.as_deref(), &to_timezone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wall_clock_time_across_a_dst_change() {
        // 2024-03-10 is the day US clocks spring forward; 09:30 is already PDT (UTC-7).
        let c = convert("2024-03-10T09:30:00", Some("America/Los_Angeles"), "Asia/Seoul").unwrap();
        assert_eq!(c.utc, "2024-03-10T16:30:00Z");
        assert_eq!(
            c.source,
            ZonedTime {
                timezone: "America/Los_Angeles".into(),
                datetime: "2024-03-10T09:30:00-07:00".into(),
                local: "2024-03-10 09:30:00".into(),
                weekday: "Sunday".into(),
                utc_offset: "-07:00".into(),
                abbreviation: "PDT".into(),
                daylight_saving: Some(true),
            }
        );
        assert_eq!(c.target.datetime, "2024-03-11T01:30:00+09:00");
        assert_eq!(c.target.abbreviation, "KST");
        assert_eq!(c.target.weekday, "Monday");
        assert_eq!(c.target.daylight_saving, Some(false));
        assert_eq!(c.hours_ahead, 16.0);
        assert_eq!(c.note, None);
    }

    #[test]
    fn instants_with_offsets_need_no_source_zone() {
        let c = convert("2024-01-15T12:00:00Z", None, "Australia/Sydney").unwrap();
        assert_eq!(c.source.timezone, "+00:00");
        assert_eq!(c.source.daylight_saving, None);
        assert_eq!(c.target.local, "2024-01-15 23:00:00");
        assert_eq!(c.target.abbreviation, "AEDT");
        assert_eq!(c.hours_ahead, 11.0);
        let c = convert("2024-01-15 21:00+09:00", Some("Asia/Seoul"), "UTC").unwrap();
        assert_eq!(c.target.local, "2024-01-15 12:00:00");
        assert_eq!(c.source.abbreviation, "KST");
        assert_eq!(c.hours_ahead, -9.0);
        assert_eq!(
            convert("2024-06-01T08:15Z", None, "utc").unwrap().target.local,
            "2024-06-01 08:15:00"
        );
    }

    #[test]
    fn dates_fractions_and_now() {
        let c = convert("2024-07-04", Some("America/New_York"), "Europe/Paris").unwrap();
        assert_eq!(c.target.local, "2024-07-04 06:00:00");
        let c = convert("2024-07-04T12:00:00.250", Some("UTC"), "Asia/Kolkata").unwrap();
        assert_eq!(c.target.datetime, "2024-07-04T17:30:00.250+05:30");
        assert!(convert("now", None, "Asia/Tokyo").unwrap().target.datetime.ends_with("+09:00"));
    }

    #[test]
    fn skipped_and_repeated_local_times() {
        let e = convert("2024-03-10T02:30:00", Some("America/New_York"), "UTC").unwrap_err();
        assert!(e.message().contains("does not exist in America/New_York"), "{e}");
        let c = convert("2024-11-03T01:30:00", Some("America/New_York"), "UTC").unwrap();
        assert_eq!(c.utc, "2024-11-03T05:30:00Z");
        assert!(c.note.unwrap().contains("happens twice"));
    }

    #[test]
    fn zone_names_are_forgiving_but_never_guessed() {
        assert_eq!(resolve_timezone("asia/seoul").unwrap(), Tz::Asia__Seoul);
        assert_eq!(resolve_timezone("Seoul").unwrap(), Tz::Asia__Seoul);
        assert_eq!(resolve_timezone(" new york ").unwrap(), Tz::America__New_York);
        let e = resolve_timezone("Asia/Seol").unwrap_err();
        assert!(e.message().starts_with("Unknown time zone `Asia/Seol`"), "{e}");
        assert_eq!(e.details().unwrap()["closest"][0], "Asia/Seoul");
        assert!(resolve_timezone("PST").is_err());
    }

    #[test]
    fn long_arguments_are_refused_before_parsing() {
        let long = "Asia/Seoul".repeat(10);
        let e = convert("now", None, &long).unwrap_err();
        assert!(
            e.message().starts_with("to_timezone is 100 characters long; the limit is 64"),
            "{e}"
        );
        let e = convert("now", Some(&long), "UTC").unwrap_err();
        assert!(e.message().starts_with("from_timezone is 100"), "{e}");
        let e = convert(&"2024-03-10".repeat(7), Some("UTC"), "UTC").unwrap_err();
        assert!(e.message().starts_with("time is 70 characters long"), "{e}");
        assert!(convert("2024-03-10T09:30:00", Some("Asia/Seoul"), "UTC").is_ok());
    }

    #[test]
    fn unreadable_times_and_missing_zones_explain_themselves() {
        let e = convert("next tuesday", Some("UTC"), "UTC").unwrap_err();
        assert!(e.message().contains("Use ISO 8601"), "{e}");
        let e = convert("2024-03-10T09:30:00", None, "UTC").unwrap_err();
        assert!(e.message().contains("from_timezone is needed"), "{e}");
    }

    #[tokio::test]
    async fn call_with_an_optional_parameter_left_out() {
        let out = Registry::global()
            .call(
                "convert-timezone",
                json!({"time": "2024-01-01T00:00:00Z", "to_timezone": "Asia/Tokyo"}),
                CallOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(out.value()["target"]["local"], "2024-01-01 09:00:00");
        let spec = Registry::global().get("convert-timezone").unwrap().spec().clone();
        assert_eq!(spec.schemas.input["required"], json!(["time", "to_timezone"]));
    }
}
