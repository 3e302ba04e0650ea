//! The seed document's weather examples, one `#[tool]` per example.
//!
//! | seed example | tool id | what it shows |
//! |---|---|---|
//! | usage / Zod / Valibot / ArkType / strict input | `weather-tool` | the basic tool; `strict` |
//! | `toModelOutput` | `weather-model-output` | raw output for the app, text + image for the model |
//! | MCP annotations | `weather-mcp` | `mcp(title, the four hints, meta)` |
//! | lifecycle hooks | `weather-hooks` | `on_input_start`, `on_input_delta`, `on_input_available`, `on_output` |
//!
//! The Zod, Valibot and ArkType variants of the seed differ only in the schema library; in Rust
//! the schema always comes from the types (`schemars`), so one tool stands for all of them.
//!
//! Instead of the seed's constant `21°C and sunny`, the tools read a small built-in table of
//! cities, so they stay offline and deterministic but still behave like a lookup: an unknown
//! place is an error that tells the model which places exist.

use tool_core::prelude::*;

/// The place to report the weather for.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct WeatherInput {
    /// City name or coordinates
    pub location: String,
}

/// Current weather at a location.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Weather {
    /// The place the report is for (the known city nearest to coordinates).
    pub location: String,
    /// Air temperature in degrees Celsius.
    pub temperature_celsius: f64,
    /// Sky and precipitation, e.g. `sunny` or `light rain`.
    pub conditions: String,
}

/// Current weather plus a link to the radar image of the area.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WeatherWithRadar {
    /// The place the report is for.
    pub location: String,
    /// Air temperature in degrees Celsius.
    pub temperature_celsius: f64,
    /// Sky and precipitation, e.g. `sunny` or `light rain`.
    pub conditions: String,
    /// URL of the current radar image of the area.
    pub radar_image_url: String,
}

/// One row of the built-in weather table.
struct Station {
    name: &'static str,
    aliases: &'static [&'static str],
    latitude: f64,
    longitude: f64,
    temperature_celsius: f64,
    conditions: &'static str,
}

const STATIONS: &[Station] = &[
    Station {
        name: "Seattle",
        aliases: &["seattle, wa", "seattle, usa"],
        latitude: 47.6062,
        longitude: -122.3321,
        temperature_celsius: 21.0,
        conditions: "sunny",
    },
    Station {
        name: "Seoul",
        aliases: &["서울", "seoul, korea", "seoul, south korea"],
        latitude: 37.5665,
        longitude: 126.978,
        temperature_celsius: 18.5,
        conditions: "partly cloudy",
    },
    Station {
        name: "London",
        aliases: &["london, uk", "london, england"],
        latitude: 51.5074,
        longitude: -0.1278,
        temperature_celsius: 14.0,
        conditions: "light rain",
    },
    Station {
        name: "Tokyo",
        aliases: &["東京", "tokyo, japan"],
        latitude: 35.6762,
        longitude: 139.6503,
        temperature_celsius: 24.0,
        conditions: "clear",
    },
    Station {
        name: "New York",
        aliases: &["nyc", "new york city", "new york, ny"],
        latitude: 40.7128,
        longitude: -74.006,
        temperature_celsius: 19.0,
        conditions: "overcast",
    },
    Station {
        name: "Paris",
        aliases: &["paris, france"],
        latitude: 48.8566,
        longitude: 2.3522,
        temperature_celsius: 16.5,
        conditions: "cloudy",
    },
    Station {
        name: "Sydney",
        aliases: &["sydney, australia"],
        latitude: -33.8688,
        longitude: 151.2093,
        temperature_celsius: 22.5,
        conditions: "windy",
    },
    Station {
        name: "Cairo",
        aliases: &["cairo, egypt"],
        latitude: 30.0444,
        longitude: 31.2357,
        temperature_celsius: 33.0,
        conditions: "hot and dry",
    },
];

/// Coordinates farther than this from every known city are not served.
const MAX_DISTANCE_KM: f64 = 50.0;

/// Longest accepted `location`, in characters.
pub const MAX_LOCATION_CHARS: usize = 200;

fn known_cities() -> String {
    STATIONS.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
}

/// `"47.6, -122.3"` or `"47.6 -122.3"` as (latitude, longitude); `None` if it is not two numbers.
fn parse_coordinates(text: &str) -> Option<(f64, f64)> {
    let mut parts = text.split(|c: char| c == ',' || c.is_whitespace()).filter(|p| !p.is_empty());
    let lat = parts.next()?.parse::<f64>().ok()?;
    let lon = parts.next()?.parse::<f64>().ok()?;
    parts.next().is_none().then_some((lat, lon))
}

/// Great-circle distance in kilometres.
fn haversine_km((lat1, lon1): (f64, f64), (lat2, lon2): (f64, f64)) -> f64 {
    const EARTH_RADIUS_KM: f64 = 6371.0;
    let (dlat, dlon) = ((lat2 - lat1).to_radians(), (lon2 - lon1).to_radians());
    let a = (dlat / 2.0).sin().powi(2) + lat1.to_radians().cos() * lat2.to_radians().cos() * (dlon / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_KM * a.sqrt().asin()
}

fn find_station(location: &str) -> Result<&'static Station, ToolError> {
    let chars = location.chars().count();
    if chars > MAX_LOCATION_CHARS {
        return Err(ToolError::new(format!(
            "The location is {chars} characters long; the limit is {MAX_LOCATION_CHARS}. Give a city name or coordinates such as \"47.61, -122.33\"."
        )));
    }
    let wanted = location.trim();
    if wanted.is_empty() {
        return Err(ToolError::new(format!(
            "The location is empty. Give a city name or coordinates such as \"47.61, -122.33\". Known cities: {}.",
            known_cities()
        )));
    }
    if let Some((lat, lon)) = parse_coordinates(wanted) {
        if !(-90.0..=90.0).contains(&lat) || !(-180.0..=180.0).contains(&lon) {
            return Err(ToolError::new(format!(
                "The coordinates {lat}, {lon} are out of range: latitude must be within -90..90 and longitude within -180..180."
            )));
        }
        let (station, km) = STATIONS
            .iter()
            .map(|s| (s, haversine_km((lat, lon), (s.latitude, s.longitude))))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("the table is not empty");
        if km <= MAX_DISTANCE_KM {
            return Ok(station);
        }
        return Err(ToolError::new(format!(
            "No weather station within {MAX_DISTANCE_KM} km of {lat}, {lon} (the nearest is {}, {km:.0} km away). Known cities: {}.",
            station.name,
            known_cities()
        )));
    }
    let key = wanted.to_lowercase();
    STATIONS
        .iter()
        .find(|s| s.name.to_lowercase() == key || s.aliases.contains(&key.as_str()))
        .ok_or_else(|| {
            ToolError::with_details(
                format!("No weather data for \"{wanted}\". Known cities: {}.", known_cities()),
                json!({ "known_cities": STATIONS.iter().map(|s| s.name).collect::<Vec<_>>() }),
            )
        })
}

/// Looks up the current weather of a city name or `"lat, lon"` coordinates in the built-in table.
pub fn lookup(location: &str) -> Result<Weather, ToolError> {
    let s = find_station(location)?;
    Ok(Weather {
        location: s.name.to_owned(),
        temperature_celsius: s.temperature_celsius,
        conditions: s.conditions.to_owned(),
    })
}

/// The radar image URL of a known city.
fn radar_url(city: &str) -> String {
    format!("https://example.com/radar/{}.png", city.to_lowercase().replace(' ', "-"))
}

/// Get the current weather for a location
///
/// Knows Seattle, Seoul, London, Tokyo, New York, Paris, Sydney and Cairo, by name or by
/// coordinates within 50 km of the city. The location is at most 200 characters.
#[tool(id = "weather-tool", strict, tags = ["weather"])]
pub async fn weather_tool(input: WeatherInput) -> Result<Weather, ToolError> {
    lookup(&input.location)
}

/// Get the current weather for a location, with a radar image
///
/// The application receives the full report; the model receives a one-line summary and the
/// radar image. The location is at most 200 characters.
#[tool(id = "weather-model-output", tags = ["weather"], to_model_output = weather_for_model)]
pub async fn weather_model_output(input: WeatherInput) -> Result<WeatherWithRadar, ToolError> {
    let w = lookup(&input.location)?;
    Ok(WeatherWithRadar {
        radar_image_url: radar_url(&w.location),
        location: w.location,
        temperature_celsius: w.temperature_celsius,
        conditions: w.conditions,
    })
}

/// What the model sees of `weather-model-output`: a text summary and the radar image.
pub fn weather_for_model(output: &WeatherWithRadar) -> ModelOutput {
    ModelOutput::content([
        ContentPart::text(format!(
            "{}: {}°C and {}",
            output.location, output.temperature_celsius, output.conditions
        )),
        ContentPart::image_url(&output.radar_image_url),
    ])
}

/// Get the current weather for a location
///
/// Exposed to MCP clients as "Weather Lookup": read-only, non-destructive, idempotent and
/// open-world. The location is at most 200 characters.
#[tool(
    id = "weather-mcp",
    tags = ["weather"],
    mcp(
        title = "Weather Lookup",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = true,
        meta = json!({"version": "1.0.0", "category": "weather"}),
    )
)]
pub async fn weather_mcp(input: WeatherInput) -> Result<Weather, ToolError> {
    lookup(&input.location)
}

/// Get the current weather for a location
///
/// Logs every stage of the call through `tracing`: input start, each streamed input chunk, the
/// complete input and the output. The location is at most 200 characters.
#[tool(
    id = "weather-hooks",
    tags = ["weather"],
    on_input_start = log_input_start,
    on_input_delta = log_input_delta,
    on_input_available = check_input,
    on_output = log_output,
)]
pub async fn weather_hooks(input: WeatherInput) -> Result<Weather, ToolError> {
    lookup(&input.location)
}

/// `on_input_start` of `weather-hooks`.
pub fn log_input_start(call: &ToolCallInfo) {
    tracing::info!(tool_call_id = %call.tool_call_id, "Tool call {} input started", call.tool_call_id);
}

/// `on_input_delta` of `weather-hooks`.
pub fn log_input_delta(call: &ToolCallInfo, delta: &str) {
    tracing::info!(tool_call_id = %call.tool_call_id, "Tool call {} received input chunk: {delta}", call.tool_call_id);
}

/// `on_input_available` of `weather-hooks`: logs the location and reports (without failing the
/// call: hook errors are only logged) a location that is blank.
pub fn check_input(call: &ToolCallInfo, input: &WeatherInput) -> Result<(), String> {
    tracing::info!(tool_call_id = %call.tool_call_id, "Tool call {} received location: {}", call.tool_call_id, input.location);
    if input.location.trim().is_empty() {
        return Err(format!("tool call {} has a blank location", call.tool_call_id));
    }
    Ok(())
}

/// `on_output` of `weather-hooks`.
pub fn log_output(call: &ToolCallInfo, output: &Weather) {
    tracing::info!(
        tool_call_id = %call.tool_call_id,
        "Tool {} call {} returned conditions: {}",
        call.tool_name,
        call.tool_call_id,
        output.conditions
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use tool_core::tool::InputHook;

    #[test]
    fn cities_by_name_alias_and_case() {
        let w = lookup("Seattle").unwrap();
        assert_eq!(
            w,
            Weather {
                location: "Seattle".into(),
                temperature_celsius: 21.0,
                conditions: "sunny".into()
            }
        );
        assert_eq!(lookup("  new york city ").unwrap().location, "New York");
        assert_eq!(lookup("NYC").unwrap().location, "New York");
        assert_eq!(lookup("서울").unwrap().location, "Seoul");
    }

    #[test]
    fn coordinates_pick_the_nearest_city_within_range() {
        assert_eq!(lookup("47.61, -122.33").unwrap().location, "Seattle");
        assert_eq!(lookup("37.57 126.98").unwrap().location, "Seoul");
        let far = lookup("0, 0").unwrap_err();
        assert!(far.message().contains("No weather station within 50 km"), "{far}");
        assert!(far.message().contains("Known cities"), "{far}");
        let bad = lookup("91, 0").unwrap_err();
        assert!(bad.message().contains("out of range"), "{bad}");
    }

    #[test]
    fn unknown_and_empty_locations_list_the_known_cities() {
        let e = lookup("Atlantis").unwrap_err();
        assert!(e.message().starts_with("No weather data for \"Atlantis\""), "{e}");
        assert!(e.message().contains("Seattle, Seoul, London"), "{e}");
        assert_eq!(e.details().unwrap()["known_cities"].as_array().unwrap().len(), STATIONS.len());
        assert!(lookup("  ").unwrap_err().message().contains("empty"));
        let long = "Seattle ".repeat(30);
        let e = lookup(&long).unwrap_err();
        assert!(e.message().contains("the limit is 200"), "{e}");
        assert!(e.message().len() < 300, "the long location is not echoed: {e}");
    }

    #[test]
    fn haversine_is_sane() {
        let seattle_to_london = haversine_km((47.6062, -122.3321), (51.5074, -0.1278));
        assert!((seattle_to_london - 7700.0).abs() < 100.0, "{seattle_to_london}");
        assert_eq!(haversine_km((1.0, 2.0), (1.0, 2.0)), 0.0);
    }

    #[test]
    fn model_output_is_text_plus_radar_image() {
        let out = WeatherWithRadar {
            location: "Seattle".into(),
            temperature_celsius: 21.0,
            conditions: "sunny".into(),
            radar_image_url: radar_url("Seattle"),
        };
        assert_eq!(
            weather_for_model(&out),
            ModelOutput::content([
                ContentPart::text("Seattle: 21°C and sunny"),
                ContentPart::image_url("https://example.com/radar/seattle.png"),
            ])
        );
        assert_eq!(radar_url("New York"), "https://example.com/radar/new-york.png");
    }

    #[tokio::test]
    async fn the_app_gets_the_raw_output_and_the_model_the_content() {
        let out = Registry::global()
            .call("weather-model-output", json!({"location": "Seattle"}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(
            out.value(),
            json!({"location": "Seattle", "temperatureCelsius": 21.0, "conditions": "sunny",
                   "radarImageUrl": "https://example.com/radar/seattle.png"})
        );
        let model = serde_json::to_value(out.for_model()).unwrap();
        assert_eq!(model["type"], "content");
        assert_eq!(model["value"][0], json!({"type": "text", "text": "Seattle: 21°C and sunny"}));
        assert_eq!(
            model["value"][1],
            json!({"type": "image-url", "url": "https://example.com/radar/seattle.png"})
        );
    }

    #[test]
    fn specs_carry_strict_mcp_and_hooks() {
        let r = Registry::global();
        let basic = r.get("weather-tool").unwrap();
        assert!(basic.spec().policy.strict);
        assert_eq!(
            basic.spec().description.lines().next(),
            Some("Get the current weather for a location")
        );
        assert_eq!(
            basic.spec().schemas.input["properties"]["location"]["description"],
            "City name or coordinates"
        );
        let mcp = r.get("weather-mcp").unwrap();
        assert_eq!(mcp.spec().presentation.mcp.title.as_deref(), Some("Weather Lookup"));
        assert_eq!(
            mcp.spec().presentation.mcp.meta,
            Some(json!({"version": "1.0.0", "category": "weather"}))
        );
        let hooks = r.get("weather-hooks").unwrap().spec().behaviour.hooks;
        assert!(hooks.on_input_start && hooks.on_input_delta && hooks.on_input_available && hooks.on_output);
    }

    #[test]
    fn hooks_run_and_a_failing_hook_reports_instead_of_panicking() {
        let tool = Registry::global().get("weather-hooks").unwrap();
        let call = ToolCallInfo {
            tool_call_id: "call_1".into(),
            tool_name: "weather-hooks".into(),
            ..ToolCallInfo::default()
        };
        assert_eq!(tool.input_hook(InputHook::Start, &call), Ok(()));
        assert_eq!(tool.input_hook(InputHook::Delta("{\"loc"), &call), Ok(()));
        assert_eq!(tool.input_hook(InputHook::Available(&json!({"location": "Paris"})), &call), Ok(()));
        let err = tool.input_hook(InputHook::Available(&json!({"location": " "})), &call).unwrap_err();
        assert!(err.message().contains("blank location"), "{err}");
    }

    #[tokio::test]
    async fn every_weather_tool_answers_the_same_lookup() {
        for id in ["weather-tool", "weather-mcp", "weather-hooks"] {
            let out = Registry::global()
                .call(id, json!({"location": "Tokyo"}), CallOptions::default())
                .await
                .unwrap();
            assert_eq!(
                out.value(),
                json!({"location": "Tokyo", "temperatureCelsius": 24.0, "conditions": "clear"}),
                "{id}"
            );
        }
        let err = Registry::global()
            .call("weather-tool", json!({"location": "Atlantis"}), CallOptions::default())
            .await
            .unwrap_err();
        assert!(err.message().contains("Known cities"), "{err}");
    }
}
