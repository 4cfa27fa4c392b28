import re
from pathlib import Path

import pytest
from redis.asyncio.connection import parse_url

from tests.support import ROOT
from worker.errors import ConfigError
from worker.settings import ENV, Guarantee, Isolation, Settings, redis_db
from worker.text.features import ChineseUnits


def test_defaults() -> None:
    s = Settings.from_env({})
    assert (s.threshold, s.similarity, s.min_words) == (11, 0.6, 10.0)
    assert s.shingle_size == 3
    assert s.chinese_units == "characters"
    assert s.input_topic == "articles"


def test_every_setting_has_one_environment_variable() -> None:
    from dataclasses import fields

    assert set(ENV) == {f.name for f in fields(Settings)}
    assert len(set(ENV.values())) == len(ENV)
    assert all(v.startswith("DEDUP_") for v in ENV.values())


def test_environment_then_overrides() -> None:
    env = {"DEDUP_THRESHOLD": "5", "DEDUP_NAMESPACE": "news", "DEDUP_MIN_WORDS": "12.5"}
    s = Settings.from_env(env, threshold=4)
    assert s.threshold == 4
    assert s.namespace == "news"
    assert s.min_words == 12.5


def test_booleans_read_as_words() -> None:
    assert Settings.from_env({"DEDUP_REDIS_CLUSTER": "true"}).redis_cluster
    assert not Settings.from_env({"DEDUP_REDIS_CLUSTER": "0"}).redis_cluster


def test_a_related_threshold_widens_the_search_not_the_duplicates() -> None:
    s = Settings(threshold=3, related_threshold=10, layout="multi-index:4")
    assert s.search_radius == 10
    assert Settings(retention_days=1.5).retention_s == 129_600


def test_enumerated_settings_take_their_values_as_text() -> None:
    assert Settings.from_env({"DEDUP_CHINESE_UNITS": "jieba"}).chinese_units == "jieba"
    assert Settings(chinese_units="jieba").chinese_units is ChineseUnits.JIEBA
    assert not Settings().exactly_once
    eos = Settings.from_env({"DEDUP_PROCESSING_GUARANTEE": "exactly_once"})
    assert eos.exactly_once
    assert eos.processing_guarantee is Guarantee.EXACTLY_ONCE


def test_the_input_is_read_committed_unless_told_otherwise() -> None:
    assert Settings().input_isolation_level is Isolation.READ_COMMITTED
    env = {"DEDUP_INPUT_ISOLATION_LEVEL": "read_uncommitted"}
    assert Settings.from_env(env).input_isolation_level is Isolation.READ_UNCOMMITTED
    with pytest.raises(ConfigError, match="exactly_once needs input_isolation_level"):
        Settings.from_env({**env, "DEDUP_PROCESSING_GUARANTEE": "exactly_once"})
    with pytest.raises(ConfigError, match="DEDUP_INPUT_ISOLATION_LEVEL='committed' is not one"):
        Settings.from_env({"DEDUP_INPUT_ISOLATION_LEVEL": "committed"})


def test_the_readme_lists_every_setting() -> None:
    readme = (ROOT / "README.md").read_text()
    rows = [line.split(" | ")[0] for line in readme.splitlines() if line.startswith("| `DEDUP_")]
    assert set(re.findall(r"`(DEDUP_[A-Z_]+)`", "\n".join(rows))) == set(ENV.values())


def test_settings_are_frozen() -> None:
    s = Settings()
    with pytest.raises(AttributeError):
        s.threshold = 5  # type: ignore[misc]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DEDUP_THRESHOLD": "three"}, "DEDUP_THRESHOLD='three' is not a valid int"),
        ({"DEDUP_THRESHOLD": "16"}, "threshold must be 0..15"),
        ({"DEDUP_CHINESE_UNITS": "chars"}, "DEDUP_CHINESE_UNITS='chars' is not one of"),
        ({"DEDUP_PROCESSING_GUARANTEE": "once"}, "DEDUP_PROCESSING_GUARANTEE='once' is not one"),
        ({"DEDUP_NAMESPACE": "a b"}, "namespace must be"),
        ({"DEDUP_UNIQUE_TOPIC": "articles"}, "four different names"),
        ({"DEDUP_MAX_MESSAGE_BYTES": "10"}, "max_message_bytes must be >= 1024"),
        ({"DEDUP_LAYOUT": "lsh"}, "is not one of: auto, pigeonhole"),
        ({"DEDUP_LAYOUT": "blocks:4", "DEDUP_THRESHOLD": "3"}, "blocks needs more than k\\+1"),
        ({"DEDUP_RECALL": "1.5"}, "recall must be in"),
        ({"DEDUP_RELATED_THRESHOLD": "3"}, "related_threshold must be 0 \\(off\\) or 12..15"),
        ({"DEDUP_RETENTION_DAYS": "-1"}, "retention_days must be >= 0"),
        ({"DEDUP_REDIS_CLUSTER": "maybe"}, "DEDUP_REDIS_CLUSTER='maybe' is not true or false"),
        ({"DEDUP_EXPECTED_DOCS": "0"}, "expected_docs must be >= 1"),
        ({"DEDUP_SIMILARITY": "0"}, "similarity must be in \\(0, 1\\]"),
        ({"DEDUP_RENEW_ON_MATCH": "often"}, "DEDUP_RENEW_ON_MATCH='often' is not true or false"),
        ({"DEDUP_REDELIVERY_WINDOW_S": "-5"}, "redelivery_window_s must be >= 0"),
        ({"DEDUP_READ_TIMEOUT_MS": "0"}, "read_timeout_ms must be >= 1"),
        ({"DEDUP_KNOWN_ARTICLES": "1"}, "known_articles must be >= 2"),
        # a misspelt protocol is named as such, not taken for SASL without credentials
        ({"DEDUP_KAFKA_SECURITY_PROTOCOL": "SASL_X"}, "kafka_security_protocol must be one of"),
        ({"DEDUP_LOG_FORMAT": "xml"}, "log_format must be one of \\('text', 'json'\\)"),
        ({"DEDUP_REDIS_READ_URL": "replica:6379"}, "redis_read_url must start with redis://"),
        ({"DEDUP_REDIS_READ_URL": "redis://replica/3"}, "the same database as redis_url"),
    ],
)
def test_bad_values_say_the_fix(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Settings.from_env(env)


def test_secrets_stay_out_of_repr_and_are_listed_for_redaction() -> None:
    s = Settings.from_env(
        {
            "DEDUP_KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
            "DEDUP_KAFKA_USERNAME": "dedup",
            "DEDUP_KAFKA_PASSWORD": "k-secret",
            "DEDUP_REDIS_URL": "rediss://dedup:r-secret@redis:6380/0",
            "DEDUP_REDIS_READ_URL": "rediss://dedup:replica-secret@replica:6380?db=0",
        }
    )
    assert "k-secret" not in repr(s)
    assert "r-secret" not in repr(s)
    assert "replica-secret" not in repr(s)
    assert s.secrets == ["k-secret", "r-secret", "replica-secret"]
    with pytest.raises(ConfigError, match="SASL needs"):
        Settings.from_env({"DEDUP_KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT"})


@pytest.mark.parametrize(
    "url",
    [
        "redis://cache:6379/3",
        "redis://cache",
        "redis://cache:6379/?db=4",
        "rediss://u:p@cache:6380/7?db=2",
        "unix:///run/redis.sock?db=2",
        "unix:///run/redis.sock",
    ],
)
def test_the_database_of_a_redis_url_is_the_one_redis_py_selects(url: str) -> None:
    assert redis_db(url) == int(parse_url(url).get("db") or 0)


@pytest.mark.parametrize(
    ("url", "listed"),
    [
        # percent-encoded in the user part: as written, and as redis-py authenticates
        ("redis://dedup:p%40ss%3Aw%2Fd@cache:6379/0", ["p%40ss%3Aw%2Fd", "p@ss:w/d"]),
        ("rediss://:plain@cache:6380", ["plain"]),
        # a query argument: as written, decoded (+ is a space), and decoded twice
        (
            "redis://cache:6379/0?db=1&password=q%2Bp+x%2540y",
            ["q%2Bp+x%2540y", "q+p x%40y", "q+p x@y"],
        ),
        ("unix:///run/redis.sock?password=s%C3%A9cret&db=2", ["s%C3%A9cret", "sécret"]),
        ("redis://cache:6379/0?pass%77ord=enc0ded-name", ["enc0ded-name"]),
        ("redis://cache:6379/0", []),
    ],
)
def test_the_redis_password_is_listed_in_every_form_it_is_written_and_read(
    url: str, listed: list[str]
) -> None:
    secrets = Settings(redis_url=url).secrets
    assert secrets == listed
    used = parse_url(url).get("password")  # what redis-py authenticates with
    assert used is None or used in secrets


def test_the_kafka_password_is_listed_with_the_redis_one_once_each() -> None:
    s = Settings(kafka_password="k@fka", redis_url="redis://:k@fka@cache/0?password=k%40fka")
    assert s.secrets == ["k@fka", "k%40fka"]


def test_a_variable_may_name_a_file_that_holds_its_value(tmp_path: Path) -> None:
    secret = tmp_path / "redis-url"
    secret.write_text("redis://:s3cret@cache:6379/2\n")
    s = Settings.from_env({"DEDUP_REDIS_URL_FILE": str(secret)})
    assert s.redis_url == "redis://:s3cret@cache:6379/2"
    assert "s3cret" in s.secrets[0]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"DEDUP_KAFKA_PASSWORD": "a", "DEDUP_KAFKA_PASSWORD_FILE": "/x"},
            "both DEDUP_KAFKA_PASSWORD and DEDUP_KAFKA_PASSWORD_FILE are set",
        ),
        ({"DEDUP_KAFKA_PASSWORD_FILE": "/no/such/file"}, "DEDUP_KAFKA_PASSWORD_FILE='/no/such"),
    ],
)
def test_secret_files_that_cannot_work_are_named(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        Settings.from_env(env)


def test_jieba_units_without_jieba_installed_say_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import worker.settings

    monkeypatch.setattr(worker.settings, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match=re.escape("pip install 'dedup-worker[jieba]'")):
        Settings(chinese_units="jieba")
    assert Settings().chinese_units is ChineseUnits.CHARACTERS  # the default needs no jieba
