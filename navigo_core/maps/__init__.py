"""Maps that work offline: local Leaflet, an offline basemap, optional online tiles.

Typical page use::

    prefix = ensure_leaflet_assets()          # once at app start
    m = build_route_map(result.points, result.geometry, tiles=settings.map_tiles,
                        tiles_url=settings.map_tiles_url,
                        attribution=settings.map_tiles_attribution,
                        lang=lang, asset_prefix=prefix)
    st_folium(m, ...)
"""

from navigo_core.maps.assets import DEFAULT_STATIC_ROOT, LEAFLET_URL_PREFIX, ensure_leaflet_assets
from navigo_core.maps.basemap import OfflineBasemap, country_outlines, outlines_geojson
from navigo_core.maps.folium_map import (
    OfflineMap,
    build_pick_map,
    build_route_map,
    from_map_coords,
    to_map_coords,
)

__all__ = [
    "DEFAULT_STATIC_ROOT",
    "LEAFLET_URL_PREFIX",
    "OfflineBasemap",
    "OfflineMap",
    "build_pick_map",
    "build_route_map",
    "country_outlines",
    "ensure_leaflet_assets",
    "from_map_coords",
    "outlines_geojson",
    "to_map_coords",
]
