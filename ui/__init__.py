"""Streamlit glue shared by app.py and the pages: cached resources, language, small renderers.

No business logic lives here: it reads state and calls navigo_core.
"""
