"""The one settings object.

Values come, highest priority first, from: arguments to ``Settings(...)``,
environment variables, a ``.env`` file, and ``.streamlit/secrets.toml``
(read as plain TOML, so the core never imports streamlit). Every field is
documented in the README's settings table; a test keeps the two in step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SECRETS_TOML = PROJECT_ROOT / ".streamlit" / "secrets.toml"
#: Where rebuildable files go unless ``CACHE_DIR`` says otherwise.
DEFAULT_CACHE_DIR = PROJECT_ROOT / "data" / "cache"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        case_sensitive=False,
        toml_file=SECRETS_TOML,
    )

    # --- app ---
    default_language: Literal["en", "zh"] = Field("en", description="UI language at start-up.")

    # --- storage ---
    database_url: str = Field(
        f"sqlite:///{PROJECT_ROOT / 'data' / 'navigo.db'}",
        description="SQLAlchemy URL of the store. Default: a SQLite file under data/ (WAL mode).",
    )
    cache_dir: str = Field(
        str(DEFAULT_CACHE_DIR),
        description="Folder for files the app rebuilds when they are missing or stale (the fitted offline intent "
        "classifier, so a start-up reads it instead of fitting). Empty: no cache.",
    )

    # --- LLM (any OpenAI-compatible server) ---
    llm_base_url: str = Field("", description="Base URL of an OpenAI-compatible API. Empty: the default OpenAI URL when a key is set.")
    llm_api_key: str = Field(
        "",
        validation_alias=AliasChoices("llm_api_key", "openai_api_key"),
        description="API key of the LLM server (falls back to OPENAI_API_KEY). Empty: offline engine.",
    )
    llm_model: str = Field("gpt-4o-mini", description="Model name sent to the LLM server.")
    llm_timeout_s: float = Field(20.0, gt=0, description="Seconds one LLM request may wait for its answer (a plain call) or for the first piece of a streamed reply.")
    llm_max_retries: int = Field(1, ge=0, le=5, description="Retries of a failed LLM request (429, 5xx, connection errors).")
    llm_structured_output: Literal["auto", "json_schema", "json_object", "prompt"] = Field(
        "auto",
        description="How structured output is asked for: json_schema (native), json_object (schema in the prompt), "
        "or prompt (plain). auto picks per provider: json_object for DeepSeek and DashScope, else json_schema.",
    )
    llm_embedding_model: str = Field("", description="Embeddings model for the L2 intent layer (nearest seed). Empty: the offline classifier.")
    llm_deadline_s: float = Field(
        60.0, gt=0,
        description="Most seconds one LLM call may take in all (waiting for a server slot, retries, the repair turn, "
        "a whole stream); then it fails with a deadline error and the caller falls back.",
    )
    llm_stream_gap_s: float = Field(
        15.0, gt=0, description="Most seconds between two pieces of a streamed reply (the first piece may take LLM_TIMEOUT_S)."
    )
    llm_max_tokens_structured: int = Field(
        512, ge=16, le=32768, description="Token cap (max_tokens) of a structured-output call (JSON answers)."
    )
    llm_max_tokens_stream: int = Field(
        512, ge=16, le=32768, description="Token cap of a streamed reply (the chat's clarification turns); the client also cuts a server that ignores it."
    )
    llm_max_tokens_text: int = Field(
        512, ge=16, le=32768, description="Token cap of a plain text call when the caller sets none."
    )
    llm_parallel: int = Field(
        4, ge=1, le=64,
        description="Parallel slots of the LLM server: no more LLM calls than this are sent at once (the planner's agents wait their turn). 1 for a local llama.cpp server.",
    )
    llm_scan_block_confidence: float = Field(
        0.0, ge=0.0, le=1.0,
        description="Confidence from which the LLM injection scan blocks on its own. 0: never on its own; its verdict "
        "then blocks only when the learned detector also finds the text suspicious.",
    )

    # --- intent routing ---
    intent_encoder: Literal["auto", "tfidf", "embeddings"] = Field(
        "auto", description="L2 layer: auto uses embeddings (nearest seed) when LLM_EMBEDDING_MODEL and a key are set, else the offline classifier (tfidf)."
    )
    intent_log_text: bool = Field(False, description="Store message text with routing events (off: only layer, intent, score, latency).")

    # --- places ---
    places_provider: Literal["auto", "gazetteer", "amap", "nominatim"] = Field(
        "auto", description="Place search: auto picks AMap when AMAP_KEY is set, else Nominatim when NOMINATIM_URL is set, else the offline gazetteer."
    )
    amap_key: str = Field("", description="AMap web-service key; enables AMap place search and distances.")
    amap_base_url: str = Field("https://restapi.amap.com", description="AMap web-service base URL.")
    nominatim_url: str = Field("", description="Base URL of a Nominatim-compatible geocoder.")

    # --- distance matrix ---
    matrix_provider: Literal["auto", "offline", "osrm", "amap"] = Field(
        "auto", description="Distances and durations: auto picks OSRM when OSRM_URL is set, else AMap when AMAP_KEY is set, else the offline estimate."
    )
    osrm_url: str = Field("", description="Base URL of an OSRM server (uses /table and /route).")
    osrm_profile: str = Field("driving", description="OSRM profile in request paths.")
    circuity_factor: float = Field(1.3, gt=1.0, description="Offline estimate: road distance = great-circle distance × this factor.")
    provider_timeout_s: float = Field(10.0, gt=0, description="Timeout in seconds for every provider request.")

    # --- flights ---
    flights_provider: Literal["auto", "offline", "duffel"] = Field(
        "auto", description="Flight offers: auto picks Duffel when DUFFEL_ACCESS_TOKEN is set, else the offline estimate (labelled estimated)."
    )
    duffel_access_token: str = Field("", description="Duffel API access token; enables real flight offers from Duffel.")
    duffel_base_url: str = Field("https://api.duffel.com", description="Duffel API base URL.")

    # --- weather ---
    weather_provider: Literal["auto", "offline", "open_meteo"] = Field(
        "auto", description="Daily forecasts: auto picks Open-Meteo only when WEATHER_ONLINE is true, else offline (no forecast, never invented)."
    )
    weather_online: bool = Field(False, description="Allow the keyless Open-Meteo forecast service (off: no weather request is ever sent).")
    open_meteo_url: str = Field("https://api.open-meteo.com", description="Open-Meteo forecast API base URL.")

    # --- points of interest (named places for cities without offline place data) ---
    poi_provider: Literal["auto", "offline", "overpass"] = Field(
        "auto", description="Named places (museums, sights, parks, viewpoints) for a city without offline place data: "
        "auto picks Overpass (OpenStreetMap) only when POI_ONLINE is true, else offline (the days name kinds of activity)."
    )
    poi_online: bool = Field(False, description="Allow the keyless Overpass API (OpenStreetMap) for named places (off: no place request is ever sent).")
    overpass_url: str = Field("https://overpass-api.de/api", description="Overpass API base URL (queries go to its /interpreter).")
    poi_radius_m: int = Field(5000, ge=200, le=50000, description="Radius around the city centre of an online place search (metres).")
    poi_max_results: int = Field(20, ge=1, le=100, description="Most named places one online place search keeps.")

    # --- chat ---
    clarify_max_rounds: int = Field(
        5, ge=1, le=20,
        description="Most questioning rounds of the chat's trip clarification; then it ends with the assumptions listed.",
    )

    # --- travel policy ---
    employee_grade: str = Field(
        "", description="The user's employee grade in the travel policy: an id (G3), a label or an alias of the policy "
        "file (manager, 经理); read by TravelPolicy.resolve_grade. Empty: unknown; the policy chat asks once."
    )
    travel_policy_file: str = Field("", description="Path of the travel policy YAML; empty: the shipped default")

    # --- sign-in and roles (navigo_core/auth, ui/auth.py) ---
    auth_mode: Literal["demo", "oidc"] | None = Field(
        None,
        description="Sign-in: oidc (st.login with the identity provider of the [auth] section of .streamlit/secrets.toml; "
        "every page needs sign-in) or demo (no sign-in: a banner and a picker of the sample users of ROLES_FILE; "
        "every role rule still holds). Empty: oidc when the secrets have an [auth] section, else demo.",
    )
    roles_file: str = Field(
        str(PROJECT_ROOT / "navigo_core" / "auth" / "data" / "roles.yaml"),
        description="Path of the roles YAML (who is an approver, for which departments or people, who is an admin; "
        "everyone else is a traveller); empty: the shipped file with sample users.",
    )
    legacy_owner: str = Field(
        "demo-shared", min_length=1, max_length=100,
        description="Owner given, when the database is upgraded, to the saved routes and plans and to the applications "
        "and claims of the old default user (me) stored before every record had an owner.",
    )

    # --- route ---
    route_max_stops: int = Field(50, ge=1, le=500, description="Most stops one route request may hold.")
    solver_time_limit_s: float = Field(1.0, gt=0, description="Time limit of the heuristic solver for large routes.")

    # --- limits (navigo_core/limits.py enforces them at every entry point) ---
    max_message_chars: int = Field(
        2000, ge=100, le=20000,
        description="Longest chat message, trip request or answer (characters); a longer one is refused before any rule runs.",
    )
    max_field_chars: int = Field(200, ge=20, le=2000, description="Longest single field: a place name, a route stop, a title.")
    max_trip_days: int = Field(60, ge=1, le=90, description="Longest trip the planner plans (days).")
    date_past_days: int = Field(365, ge=0, le=3650, description="Earliest trip date accepted: this many days before today.")
    date_future_days: int = Field(730, ge=1, le=3650, description="Latest trip date accepted: this many days after today.")
    max_travellers: int = Field(50, ge=1, le=60, description="Most travellers in one trip (at least 1).")
    max_upload_bytes: int = Field(2_000_000, ge=1000, le=200_000_000, description="Largest uploaded or pasted file (bytes).")
    max_upload_rows: int = Field(5000, ge=1, le=1_000_000, description="Most rows of an uploaded or pasted file.")

    # --- map ---
    map_tiles: Literal["none", "osm", "amap", "custom"] = Field(
        "none", description="Map tiles: none (offline basemap of country outlines), osm, amap (GCJ-02), or custom (MAP_TILES_URL)."
    )
    map_tiles_url: str = Field("", description="Tile URL template used when MAP_TILES=custom.")
    map_tiles_attribution: str = Field("", description="Attribution shown for custom tiles.")

    @field_validator("auth_mode", mode="before")
    @classmethod
    def _auth_mode_auto(cls, v: object) -> object:
        """AUTH_MODE= (empty) or auto: decided by resolve_auth_mode; any case."""
        if isinstance(v, str):
            v = v.strip().lower()
            return None if v in ("", "auto") else v
        return v

    @field_validator("llm_base_url", "nominatim_url", "osrm_url", "amap_base_url", "map_tiles_url")
    @classmethod
    def _strip_slash(cls, v: str) -> str:
        return v.strip().rstrip("/")

    def model_post_init(self, __context: object) -> None:
        """Register every credential these settings hold (keys, tokens, the user info and token query
        values of each URL setting) with :mod:`navigo_core.redact`, so no screen, log or stored row shows it."""
        from navigo_core.redact import install_log_redaction, register_secret, register_url_secrets

        install_log_redaction()
        register_secret(self.llm_api_key, self.amap_key, self.duffel_access_token)
        for name in type(self).model_fields:
            value = getattr(self, name, None)
            if isinstance(value, str) and (name.endswith("_url") or "://" in value):
                register_url_secrets(value)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, dotenv_settings, TomlConfigSettingsSource(settings_cls))

    # --- derived ---
    @property
    def llm_enabled(self) -> bool:
        return bool(self.llm_api_key)

    @property
    def effective_places_provider(self) -> str:
        if self.places_provider != "auto":
            return self.places_provider
        if self.amap_key:
            return "amap"
        if self.nominatim_url:
            return "nominatim"
        return "gazetteer"

    @property
    def effective_matrix_provider(self) -> str:
        if self.matrix_provider != "auto":
            return self.matrix_provider
        if self.osrm_url:
            return "osrm"
        if self.amap_key:
            return "amap"
        return "offline"


AuthMode = Literal["demo", "oidc"]


def resolve_auth_mode(settings: Settings, *, has_auth_section: bool) -> AuthMode:
    """The sign-in mode in force: ``settings.auth_mode`` when set, else ``oidc`` when Streamlit's secrets have an
    ``[auth]`` section (an identity provider is configured) and ``demo`` when they have none."""
    if settings.auth_mode is not None:
        return settings.auth_mode
    return "oidc" if has_auth_section else "demo"


def get_settings(**overrides: object) -> Settings:
    """A fresh Settings (cheap); pass overrides in tests."""
    return Settings(**overrides)  # type: ignore[arg-type]
