//! What the CLI's test modules share: the ids of the tools the `toolsmith` binary links.

pub const ALL_IDS: [&str; 17] = [
    "ask-confirmation",
    "calculate",
    "convert-timezone",
    "convert-units",
    "example-input-available",
    "example-input-delta",
    "example-input-start",
    "example-output",
    "json-query",
    "lookup-customer",
    "search-files",
    "text-stats",
    "weather-hooks",
    "weather-mcp",
    "weather-model-output",
    "weather-tool",
    "write-file",
];
