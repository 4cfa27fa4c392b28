import tempfile
from pathlib import Path

from worker.settings import Settings
from worker.stream import app


def test_the_data_folder_is_not_in_the_working_directory() -> None:
    # An image runs the worker as a user who may not write its working directory.
    datadir = Path(app.create_app(Settings(app_id="where")).conf.datadir)
    assert datadir.is_relative_to(tempfile.gettempdir())
    assert not datadir.is_relative_to(Path.cwd())
