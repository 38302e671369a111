"""Provider pointers: aliases from providers.toml, built-ins, resolution, defaults, API keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from loomdb.errors import InvalidInput, ProviderError
from loomdb.providers import client_for, default_model, load_config, resolve_model

CONFIG = """
default = "milli"

[models.nano]
provider = "openai"
model = "gpt-nano-test"

[models.milli]
provider = "anthropic"
model = "claude-milli-test"
params = { max_tokens = 512 }

[models.mega]
provider = "openai"
model = "big-model"
base_url = "http://127.0.0.1:8000/v1"
api_key_env = "MEGA_KEY"
mode = "completion"
timeout = 5
max_retries = 0
context_window = 8192
params = { temperature = 0.2 }

[models.vllm]
provider = "openai"
model = "qwen"
base_url = "http://127.0.0.1:8001/v1"
api_key_env = ""
"""


@pytest.fixture
def config_path(tmp_path: Path) -> Path:
    path = tmp_path / "providers.toml"
    path.write_text(CONFIG)
    return path


class TestLoading:
    def test_aliases_map_to_provider_model_url_key_and_params(self, config_path):
        spec = resolve_model("mega", load_config(config_path))
        assert (spec.name, spec.kind, spec.model, spec.base_url) == (
            "mega",
            "openai",
            "big-model",
            "http://127.0.0.1:8000/v1",
        )
        assert (spec.api_key_env, spec.mode, spec.timeout, spec.max_retries) == (
            "MEGA_KEY",
            "completion",
            5,
            0,
        )
        assert spec.params == {"temperature": 0.2} and spec.context_window == 8192

    def test_each_kind_has_its_default_url_and_key_variable(self, config_path):
        config = load_config(config_path)
        assert resolve_model("nano", config).api_key_env == "OPENAI_API_KEY"
        assert resolve_model("nano", config).base_url == "https://api.openai.com/v1"
        assert resolve_model("milli", config).api_key_env == "ANTHROPIC_API_KEY"

    def test_an_empty_key_variable_means_no_key_is_needed(self, config_path):
        assert resolve_model("vllm", load_config(config_path)).api_key({}) is None

    def test_a_missing_file_gives_the_built_ins(self, tmp_path):
        config = load_config(tmp_path / "absent.toml")
        assert set(config.models) == {"local"} and config.default is None

    def test_invalid_toml_is_invalid_input_naming_the_file(self, tmp_path):
        path = tmp_path / "providers.toml"
        path.write_text("[models.x\n")
        with pytest.raises(InvalidInput, match="providers.toml.*not valid TOML"):
            load_config(path)

    def test_an_unknown_provider_kind_is_invalid_input(self, tmp_path):
        path = tmp_path / "providers.toml"
        path.write_text('[models.x]\nprovider = "cohere"\nmodel = "c"\n')
        with pytest.raises(
            InvalidInput, match="models.x.provider: must be one of openai, anthropic, local"
        ):
            load_config(path)

    def test_an_unknown_field_is_invalid_input(self, tmp_path):
        path = tmp_path / "providers.toml"
        path.write_text('[models.x]\nprovider = "openai"\nmodel = "m"\napi_key = "sk-inline"\n')
        with pytest.raises(InvalidInput, match="unknown fields"):
            load_config(path)


class TestResolution:
    def test_local_is_built_in_as_the_in_process_smollm2(self):
        spec = resolve_model("local")
        assert (spec.kind, spec.model, spec.context_window, spec.api_key_env) == (
            "local",
            "SmolLM2-135M-Instruct",
            2048,
            None,
        )

    def test_an_unknown_name_is_invalid_input_listing_the_known_aliases(self, config_path):
        with pytest.raises(
            InvalidInput,
            match="unknown model 'giga'; known aliases: local, mega, milli, nano, vllm",
        ):
            resolve_model("giga", load_config(config_path))

    def test_a_provider_prefix_names_a_model_directly(self):
        spec = resolve_model("anthropic:claude-x")
        assert (spec.kind, spec.model, spec.api_key_env) == (
            "anthropic",
            "claude-x",
            "ANTHROPIC_API_KEY",
        )

    def test_a_configured_model_id_finds_its_alias(self, config_path):
        assert resolve_model("big-model", load_config(config_path)).name == "mega"


class TestDefaultModel:
    def test_the_configured_default_wins(self, config_path):
        assert default_model(load_config(config_path), {}).name == "milli"

    def test_without_config_or_keys_it_is_local(self, tmp_path):
        assert default_model(load_config(tmp_path / "none.toml"), {}).name == "local"

    def test_a_key_in_the_environment_alone_does_not_pick_a_paid_model(self, tmp_path):
        assert (
            default_model(load_config(tmp_path / "none.toml"), {"OPENAI_API_KEY": "sk-x"}).name
            == "local"
        )

    def test_without_a_default_the_first_alias_whose_key_is_set_is_used(self, tmp_path):
        path = tmp_path / "providers.toml"
        path.write_text(CONFIG.replace('default = "milli"', ""))
        assert default_model(load_config(path), {"MEGA_KEY": "k"}).name == "mega"


class TestKeys:
    def test_the_key_comes_from_the_named_environment_variable(self, config_path):
        assert (
            resolve_model("mega", load_config(config_path)).api_key({"MEGA_KEY": "secret"})
            == "secret"
        )

    def test_a_missing_key_is_a_provider_error_naming_the_variable(self, config_path):
        with pytest.raises(
            ProviderError, match="nano: no API key: set the environment variable OPENAI_API_KEY"
        ):
            resolve_model("nano", load_config(config_path)).api_key({})

    def test_making_a_client_without_its_key_fails_the_same_way(self, config_path):
        for alias, var in (("nano", "OPENAI_API_KEY"), ("milli", "ANTHROPIC_API_KEY")):
            with pytest.raises(ProviderError, match=var):
                client_for(resolve_model(alias, load_config(config_path)), environ={})
