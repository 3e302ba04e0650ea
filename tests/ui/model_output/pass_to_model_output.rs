// `to_model_output` decides what the model sees; the application still gets the raw output.
use tool_core::prelude::*;

#[derive(Serialize, JsonSchema)]
pub struct Weather {
    pub location: String,
    pub temperature_celsius: f64,
}

fn summarize(w: &Weather) -> ModelOutput {
    ModelOutput::text(format!("{}: {}°C", w.location, w.temperature_celsius))
}

fn maybe_summarize(w: &Weather) -> Option<ModelOutput> {
    (w.temperature_celsius > 30.0).then(|| ModelOutput::text("hot"))
}

/// Get the current weather for a location
#[tool(to_model_output = summarize)]
pub async fn weather(location: String) -> Weather {
    Weather {
        location,
        temperature_celsius: 21.0,
    }
}

/// Get the current weather, summarised only when hot
#[tool(to_model_output = maybe_summarize)]
pub async fn weather_hot(location: String) -> Weather {
    Weather {
        location,
        temperature_celsius: 12.0,
    }
}

pub fn main() {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let registry = &Registry::from_module(module_path!()).unwrap();
        assert!(registry.get("weather").unwrap().spec().behaviour.has_model_output);

        let out = registry
            .call("weather", json!({"location": "Rome"}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(out.value(), json!({"location": "Rome", "temperature_celsius": 21.0}));
        assert_eq!(out.model_output(), Some(&ModelOutput::text("Rome: 21°C")));
        assert_eq!(out.for_model(), ModelOutput::text("Rome: 21°C"));

        let out = registry
            .call("weather-hot", json!({"location": "Bergen"}), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(out.model_output(), None);
        assert_eq!(
            out.for_model(),
            ModelOutput::Json(json!({"location": "Bergen", "temperature_celsius": 12.0}))
        );
    });
}
