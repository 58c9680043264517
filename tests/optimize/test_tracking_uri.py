"""A directory tracking store is refused with a clear error naming the database URI to use instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from evigate.errors import ConfigError
from evigate.optimize import tracking


@pytest.mark.parametrize("form", ["{path}", "file://{path}", "file:{path}"])
def test_a_directory_store_is_a_config_error_naming_a_sqlite_uri(tmp_path: Path, form: str) -> None:
    """Was: "internal error (MlflowException: The filesystem tracking backend … is in maintenance mode …)"."""
    with pytest.raises(ConfigError, match=r"sqlite:///.*mlruns\.db"):
        tracking.configure(form.format(path=tmp_path / "mlruns"))


def test_a_database_uri_is_taken(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'x.db'}"
    assert tracking.configure(uri) == uri
