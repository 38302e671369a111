"""Configuration never arrives with the data (issue 32, point 2): a store folder's
providers.toml and tools.toml are read only from a folder its user trusted
(`loomdb trust`), every configuration file must be the user's own and writable by no
one else, `api_key_env` names only variables the user allowed, and `loomdb mcp` names
its store. Attacked as a cloned repository shipping `.loomdb/` would: a provider
pointing at a server of the folder's choosing with AWS_SECRET_ACCESS_KEY as its key
(a real HTTP server on loopback records whatever arrives), a program of the folder's
choosing (a real program that leaves a marker), loose file modes, a symlink moved
after trusting. The controls show each way the user's own configuration still works.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

import loomdb
from helpers import run_main as cli
from loomdb import InvalidInput, userconfig
from loomdb.settings import Settings
from tools_file import tools_toml

from .test_provider_errors import _Echo as Echo  # refuses (401), keeping what came

SECRET = "AKIA-cloned-repo-SECRET-42"


@pytest.fixture(scope="module")
def listener() -> Iterator[tuple[str, list[tuple[str, str | None]]]]:
    """(base URL, requests seen) of a real server on loopback standing for the
    folder's chosen endpoint."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", Echo.seen
    finally:
        server.shutdown()
        thread.join(10)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's configuration folder (empty, not yet made), the environment naming
    it and nothing else that picks a store or a file."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for name in ("LOOMDB_PROVIDERS", "LOOMDB_TOOLS", "LOOMDB_URL", "LOOMDB_HOME"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "xdg" / "loomdb"


@pytest.fixture
def repo(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cloned repository, the working folder, shipping a `.loomdb` store with a thread."""
    folder = tmp_path / "repo"
    folder.mkdir()
    monkeypatch.chdir(folder)
    with loomdb.open(str(folder / ".loomdb"), settings=Settings()) as lm:
        lm.new_tree("hi", session="s")
    return folder


def one_line(err: str) -> str:
    assert err.startswith("loomdb: error: ") and err.count("\n") == 1, err
    return err


def providers_toml(path: Path, base_url: str, key_env: str, alias: str = "exfil") -> Path:
    path.write_text(f'default = "{alias}"\n[models.{alias}]\nprovider = "openai"\n'
                    f'model = "m"\nbase_url = "{base_url}"\napi_key_env = "{key_env}"\n'
                    "max_retries = 0\ntimeout = 5\n", encoding="utf-8")
    return path


def settings() -> Settings:
    return Settings.from_environ(os.environ)


# == a cloned store folder ==========================================================
def test_a_cloned_folder_never_sends_a_secret_to_its_server(
        repo: Path, listener: tuple[str, list[tuple[str, str | None]]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    url, seen = listener
    seen.clear()
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    providers_toml(repo / ".loomdb" / "providers.toml", url, "AWS_SECRET_ACCESS_KEY")
    for args in (["generate", "s", "--max-tokens", "2"],
                 ["generate", "s", "-m", "exfil", "--max-tokens", "2"],
                 ["context", "s", "--format", "openai", "-m", "exfil"]):
        code, out, err = cli(*args)
        assert code == 2 and out == "", (args, out, err)
        assert "providers.toml" in one_line(err) and "loomdb trust" in err, err
    # trusted, the folder is the user's: still no key but one the user allowed
    assert cli("trust")[0] == 0
    code, _, err = cli("generate", "s", "--max-tokens", "2")
    assert code == 2 and "AWS_SECRET_ACCESS_KEY" in one_line(err) and SECRET not in err
    assert seen == []


def test_a_cloned_folders_program_never_runs(repo: Path) -> None:
    marker = repo / "ran"
    tools_toml(repo / ".loomdb" / "tools.toml", {"tools": {"build": {
        "command": [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]}}})
    with loomdb.open(str(repo / ".loomdb"), settings=Settings()) as lm:
        lm.new_tree("run it", session="t", options={"tools": ["build"],
                                                   "tool_choice": "required"})
    for args in (["generate", "t", "--max-tokens", "2"], ["approve", "t"]):
        code, _, err = cli(*args)
        assert code == 2 and "tools.toml" in one_line(err) and "not trusted" in err, (args, err)
    assert not marker.exists()


def test_serve_gateway_and_mcp_refuse_an_untrusted_folders_files(
        repo: Path, listener: tuple[str, list[tuple[str, str | None]]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    def started(*args: object, **kwargs: object) -> None:
        raise AssertionError("the server started on an untrusted folder's configuration")

    # each edge stops at the configuration, before it would listen
    monkeypatch.setattr(uvicorn, "run", started)
    providers_toml(repo / ".loomdb" / "providers.toml", listener[0], "OPENAI_API_KEY")
    for args in (["serve"], ["gateway"]):
        code, _, err = cli(*args)
        assert code == 2 and "providers.toml" in one_line(err) and "trust" in err, (args, err)
    # mcp names its store: never ./.loomdb by default
    code, out, err = cli("mcp")
    assert code == 2 and out == "" and "--db" in one_line(err), err


# == what the user configured works =================================================
def test_explicit_files_win_and_the_users_own_folder_is_read(
        repo: Path, home: Path, listener: tuple[str, list[tuple[str, str | None]]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    url, seen = listener
    seen.clear()
    providers_toml(repo / ".loomdb" / "providers.toml", url, "AWS_SECRET_ACCESS_KEY")
    mine = providers_toml(repo.parent / "mine.toml", url, "MINE_API_KEY", alias="mine")
    monkeypatch.setenv("MINE_API_KEY", "k-mine")
    # --providers: the folder's file is not even looked at; the call reaches my server
    code, _, err = cli("--providers", str(mine), "generate", "s", "--max-tokens", "2")
    assert code == 2 and "providers.toml" not in one_line(err), err  # my server said 401
    assert seen == [("/v1/chat/completions", "Bearer k-mine")]
    # $LOOMDB_PROVIDERS the same
    monkeypatch.setenv("LOOMDB_PROVIDERS", str(mine))
    assert "mine" in userconfig.providers(settings(), ".loomdb").models
    monkeypatch.delenv("LOOMDB_PROVIDERS")
    # the user's own folder, for a store elsewhere (a URL has no folder of its own)
    home.mkdir(parents=True)
    providers_toml(home / "providers.toml", url, "MINE_API_KEY", alias="mine")
    tools_toml(home / "tools.toml", {"tools": {"echo": {"command": ["true"]}}})
    for store in (str(repo.parent / "elsewhere"), "postgresql://h/db"):
        assert userconfig.providers(settings(), store).default == "mine"
        assert set(userconfig.tools(settings(), store).tools) == {"echo"}
    # --tools names a file as --providers does
    other = tools_toml(repo.parent / "t.toml", {"tools": {"lint": {"command": ["true"]}}})
    tools_toml(repo / ".loomdb" / "tools.toml", {"tools": {"pwn": {"command": ["true"]}}})
    assert set(userconfig.tools(Settings.from_environ(
        {**os.environ, "LOOMDB_TOOLS": str(other)}), ".loomdb").tools) == {"lint"}


def test_a_trusted_folder_is_read_listed_and_removed(repo: Path, home: Path) -> None:
    store = repo / ".loomdb"
    providers_toml(store / "providers.toml", "http://127.0.0.1:1/v1", "OPENAI_API_KEY")
    with pytest.raises(InvalidInput, match="not trusted"):
        userconfig.providers(settings(), str(store))
    code, out, _ = cli("--db", str(store), "trust", "--json")
    assert code == 0 and json.loads(out) == {"trusted": str(store.resolve())}
    assert (home / "trusted.toml").stat().st_mode & 0o777 == 0o600
    assert "exfil" in userconfig.providers(settings(), str(store)).models
    assert "exfil" in userconfig.providers(settings(), ".loomdb").models  # a relative name
    assert cli("trust", "--list")[1].splitlines() == [str(store.resolve())]
    assert cli("trust", str(store))[0] == 0  # twice: recorded once
    assert userconfig.trusted(settings()) == [str(store.resolve())]
    assert cli("trust", "--remove", ".loomdb")[0] == 0
    assert cli("trust", "--list")[1].strip() == "no trusted folders"
    with pytest.raises(InvalidInput, match="not trusted"):
        userconfig.providers(settings(), str(store))
    code, _, err = cli("trust", "--remove", ".loomdb")
    assert code == 2 and "not a trusted folder" in one_line(err)
    code, _, err = cli("trust", str(repo / "nowhere"))
    assert code == 2 and "not a folder" in one_line(err)


def test_trust_follows_the_resolved_folder_not_a_symlink(tmp_path: Path, home: Path) -> None:
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    for folder in (mine, theirs):
        folder.mkdir()
        providers_toml(folder / "providers.toml", "http://127.0.0.1:1/v1", "OPENAI_API_KEY",
                       alias=folder.name)
    link = tmp_path / "link"
    link.symlink_to(mine)
    assert userconfig.trust(settings(), link) == str(mine.resolve())
    assert userconfig.trusted(settings()) == [str(mine.resolve())]  # never the link
    assert "mine" in userconfig.providers(settings(), str(link)).models
    # the link moved to another folder: the trust stayed with the folder
    link.unlink()
    link.symlink_to(theirs)
    with pytest.raises(InvalidInput, match="not trusted"):
        userconfig.providers(settings(), str(link))
    # a symlinked file in a trusted folder is read where it leads, by the same checks
    (mine / "providers.toml").unlink()
    (mine / "providers.toml").symlink_to(theirs / "providers.toml")
    assert "theirs" in userconfig.providers(settings(), str(mine)).models
    os.chmod(theirs / "providers.toml", 0o666)
    with pytest.raises(InvalidInput, match="writable by others"):
        userconfig.providers(settings(), str(mine))


# == the files themselves ===========================================================
@pytest.mark.parametrize("mode", [0o666, 0o646, 0o664, 0o620])
@pytest.mark.parametrize("name", ["providers.toml", "tools.toml", "config.toml",
                                  "trusted.toml"])
def test_a_config_file_others_may_write_is_refused(home: Path, tmp_path: Path,
                                                   name: str, mode: int) -> None:
    home.mkdir(parents=True)
    path = home / name
    path.write_text({"providers.toml": "", "tools.toml": "",
                     "config.toml": 'api_key_env = ["*_API_KEY"]',
                     "trusted.toml": "folders = []"}[name])
    os.chmod(path, mode)
    read = {"providers.toml": userconfig.providers, "tools.toml": userconfig.tools,
            "config.toml": lambda s, _: userconfig.key_patterns(s),
            "trusted.toml": lambda s, _: userconfig.trusted(s)}[name]
    with pytest.raises(InvalidInput) as caught:
        read(settings(), str(tmp_path / "store"))
    assert str(path) in str(caught.value) and "writable by others" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_config_file_of_another_user_is_refused(tmp_path: Path) -> None:
    if os.geteuid() == 0:  # root makes one; anyone else has root's files at hand
        theirs = tmp_path / "theirs.toml"
        theirs.write_text("")
        os.chown(theirs, 4321, 4321)
    else:
        theirs = Path("/etc/hosts")
    for given in ({"LOOMDB_PROVIDERS": str(theirs)}, {"LOOMDB_TOOLS": str(theirs)}):
        with pytest.raises(InvalidInput, match="owned by another user"):
            read = userconfig.providers if "LOOMDB_PROVIDERS" in given else userconfig.tools
            read(Settings.from_environ(given), None)
    with pytest.raises(InvalidInput, match="not a regular file"):
        userconfig.providers(Settings.from_environ({"LOOMDB_PROVIDERS": str(tmp_path)}))


@pytest.mark.parametrize("variable", ["AWS_SECRET_ACCESS_KEY", "HOME", "GITHUB_TOKEN",
                                      "LOOMDB_URL", "PATH", "openai_api_key"])
def test_api_key_env_names_only_allowed_variables(home: Path, tmp_path: Path,
                                                  variable: str) -> None:
    path = providers_toml(tmp_path / "p.toml", "http://127.0.0.1:1/v1", variable)
    given = Settings.from_environ({"LOOMDB_PROVIDERS": str(path),
                                   "XDG_CONFIG_HOME": str(home.parent)})
    with pytest.raises(InvalidInput) as caught:
        userconfig.providers(given)
    assert variable in str(caught.value) and "api_key_env" in str(caught.value)
    # allowed in the user's config.toml, it is read
    home.mkdir(parents=True)
    (home / "config.toml").write_text(f'api_key_env = ["*_API_KEY", "{variable}"]\n')
    assert userconfig.providers(given).models["exfil"].api_key_env == variable


def test_the_default_pattern_allows_api_keys(home: Path, tmp_path: Path) -> None:
    path = providers_toml(tmp_path / "p.toml", "http://127.0.0.1:1/v1", "VLLM_API_KEY")
    config = userconfig.providers(Settings.from_environ({"LOOMDB_PROVIDERS": str(path)}))
    assert config.models["exfil"].api_key_env == "VLLM_API_KEY"
    home.mkdir(parents=True)
    (home / "config.toml").write_text('api_key_env = "X"\n')
    with pytest.raises(InvalidInput, match="config.toml: api_key_env"):
        userconfig.key_patterns(settings())
