//! Where a built-in published config came from and how it was made to fit this server and host
//! (docs/configs.md): recorded in run.json beside the config's text.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ConfigSource {
    /// The studies' short name: `cx9a2`, `cz11a`.
    pub name: String,
    /// The published file the settings were taken from: repository and path.
    pub source: String,
    /// The server version the settings were chosen for.
    pub server_version: String,
    /// The host the config was published for: `c8r32 (8 cores, 32 GiB RAM)`.
    pub published_host: String,
    /// This host's RAM, whole GiB (MemTotal rounded as docs/configs.md says).
    pub host_memory_gib: u64,
    /// The server's memory cap in MiB (`--server-memory`) when the sizes were scaled to it
    /// instead of the host: a change of method, not the published setup. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_cap_mib: Option<u64>,
    /// host_memory_gib / the published host's RAM: what memory sizes were multiplied by.
    pub scale: f64,
    /// Each memory setting, as published and as given.
    pub scaled: Vec<ScaledSetting>,
    /// Each setting not given as published (dropped, changed, added, or not in this version),
    /// as the comment line in the config text says it.
    #[serde(default)]
    pub not_as_published: Vec<String>,
    /// A dbperf.toml config that extends this one: its name, and which of the scaled settings
    /// above it sets again (its lines come last, so the server takes them, not `used`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_by: Option<Extension>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Extension {
    pub config: String,
    pub overrides: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScaledSetting {
    pub setting: String,
    pub published: String,
    pub used: String,
}
