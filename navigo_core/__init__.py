"""NaviGo core: pure, typed logic behind the Streamlit pages. Never imports streamlit."""

__version__ = "0.1.0"
