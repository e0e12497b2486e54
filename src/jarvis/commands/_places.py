"""Place names -> IANA time zones: major cities, countries and US states, offline."""

from __future__ import annotations

import re
import zoneinfo
from functools import lru_cache

from rapidfuzz import fuzz, process

__all__ = ["PLACE_ZONES", "zone_for_place"]

PLACE_ZONES: dict[str, str] = {
    # US cities
    "new york": "America/New_York", "new york city": "America/New_York",
    "nyc": "America/New_York", "boston": "America/New_York",
    "washington dc": "America/New_York", "washington d.c.": "America/New_York",
    "philadelphia": "America/New_York", "miami": "America/New_York",
    "atlanta": "America/New_York", "detroit": "America/Detroit",
    "chicago": "America/Chicago", "houston": "America/Chicago", "dallas": "America/Chicago",
    "austin": "America/Chicago", "new orleans": "America/Chicago",
    "minneapolis": "America/Chicago", "denver": "America/Denver",
    "phoenix": "America/Phoenix", "salt lake city": "America/Denver",
    "los angeles": "America/Los_Angeles", "la": "America/Los_Angeles",
    "san francisco": "America/Los_Angeles", "seattle": "America/Los_Angeles",
    "portland": "America/Los_Angeles", "las vegas": "America/Los_Angeles",
    "san diego": "America/Los_Angeles", "anchorage": "America/Anchorage",
    "honolulu": "Pacific/Honolulu",
    # US states
    "california": "America/Los_Angeles", "washington state": "America/Los_Angeles",
    "oregon": "America/Los_Angeles", "nevada": "America/Los_Angeles",
    "arizona": "America/Phoenix", "colorado": "America/Denver", "utah": "America/Denver",
    "texas": "America/Chicago", "illinois": "America/Chicago",
    "minnesota": "America/Chicago", "louisiana": "America/Chicago",
    "florida": "America/New_York", "georgia state": "America/New_York",
    "new york state": "America/New_York", "massachusetts": "America/New_York",
    "pennsylvania": "America/New_York", "ohio": "America/New_York",
    "michigan": "America/Detroit", "virginia": "America/New_York",
    "north carolina": "America/New_York", "new jersey": "America/New_York",
    "alaska": "America/Anchorage", "hawaii": "Pacific/Honolulu",
    "georgia": "America/New_York", "maine": "America/New_York",
    "new hampshire": "America/New_York", "vermont": "America/New_York",
    "rhode island": "America/New_York", "connecticut": "America/New_York",
    "delaware": "America/New_York", "maryland": "America/New_York",
    "west virginia": "America/New_York", "south carolina": "America/New_York",
    "indiana": "America/Indiana/Indianapolis", "kentucky": "America/New_York",
    "tennessee": "America/Chicago", "alabama": "America/Chicago",
    "mississippi": "America/Chicago", "arkansas": "America/Chicago",
    "missouri": "America/Chicago", "iowa": "America/Chicago", "wisconsin": "America/Chicago",
    "oklahoma": "America/Chicago", "kansas": "America/Chicago",
    "nebraska": "America/Chicago", "north dakota": "America/Chicago",
    "south dakota": "America/Chicago", "montana": "America/Denver",
    "wyoming": "America/Denver", "idaho": "America/Boise", "new mexico": "America/Denver",
    # Canada and Latin America
    "toronto": "America/Toronto", "montreal": "America/Toronto",
    "vancouver": "America/Vancouver", "calgary": "America/Edmonton",
    "mexico city": "America/Mexico_City", "mexico": "America/Mexico_City",
    "sao paulo": "America/Sao_Paulo", "são paulo": "America/Sao_Paulo",
    "rio de janeiro": "America/Sao_Paulo", "brazil": "America/Sao_Paulo",
    "buenos aires": "America/Argentina/Buenos_Aires",
    "argentina": "America/Argentina/Buenos_Aires", "lima": "America/Lima",
    "peru": "America/Lima", "bogota": "America/Bogota", "colombia": "America/Bogota",
    "santiago": "America/Santiago", "chile": "America/Santiago",
    # Europe
    "london": "Europe/London", "uk": "Europe/London", "united kingdom": "Europe/London",
    "england": "Europe/London", "britain": "Europe/London", "edinburgh": "Europe/London",
    "dublin": "Europe/Dublin", "ireland": "Europe/Dublin", "lisbon": "Europe/Lisbon",
    "portugal": "Europe/Lisbon", "madrid": "Europe/Madrid", "barcelona": "Europe/Madrid",
    "spain": "Europe/Madrid", "paris": "Europe/Paris", "france": "Europe/Paris",
    "brussels": "Europe/Brussels", "belgium": "Europe/Brussels",
    "amsterdam": "Europe/Amsterdam", "netherlands": "Europe/Amsterdam",
    "berlin": "Europe/Berlin", "munich": "Europe/Berlin", "germany": "Europe/Berlin",
    "zurich": "Europe/Zurich", "switzerland": "Europe/Zurich", "vienna": "Europe/Vienna",
    "austria": "Europe/Vienna", "rome": "Europe/Rome", "milan": "Europe/Rome",
    "italy": "Europe/Rome", "stockholm": "Europe/Stockholm", "sweden": "Europe/Stockholm",
    "oslo": "Europe/Oslo", "norway": "Europe/Oslo", "copenhagen": "Europe/Copenhagen",
    "denmark": "Europe/Copenhagen", "helsinki": "Europe/Helsinki",
    "finland": "Europe/Helsinki", "warsaw": "Europe/Warsaw", "poland": "Europe/Warsaw",
    "prague": "Europe/Prague", "czech republic": "Europe/Prague",
    "budapest": "Europe/Budapest", "hungary": "Europe/Budapest",
    "athens": "Europe/Athens", "greece": "Europe/Athens", "istanbul": "Europe/Istanbul",
    "turkey": "Europe/Istanbul", "kyiv": "Europe/Kyiv", "kiev": "Europe/Kyiv",
    "ukraine": "Europe/Kyiv", "moscow": "Europe/Moscow", "russia": "Europe/Moscow",
    "reykjavik": "Atlantic/Reykjavik", "iceland": "Atlantic/Reykjavik",
    # Africa and the Middle East
    "cairo": "Africa/Cairo", "egypt": "Africa/Cairo", "lagos": "Africa/Lagos",
    "nigeria": "Africa/Lagos", "nairobi": "Africa/Nairobi", "kenya": "Africa/Nairobi",
    "johannesburg": "Africa/Johannesburg", "cape town": "Africa/Johannesburg",
    "south africa": "Africa/Johannesburg", "casablanca": "Africa/Casablanca",
    "morocco": "Africa/Casablanca", "dubai": "Asia/Dubai", "abu dhabi": "Asia/Dubai",
    "uae": "Asia/Dubai", "united arab emirates": "Asia/Dubai", "riyadh": "Asia/Riyadh",
    "saudi arabia": "Asia/Riyadh", "tel aviv": "Asia/Jerusalem",
    "jerusalem": "Asia/Jerusalem", "israel": "Asia/Jerusalem", "tehran": "Asia/Tehran",
    "iran": "Asia/Tehran",
    # Asia and Oceania
    "karachi": "Asia/Karachi", "pakistan": "Asia/Karachi", "delhi": "Asia/Kolkata",
    "new delhi": "Asia/Kolkata", "mumbai": "Asia/Kolkata", "bangalore": "Asia/Kolkata",
    "india": "Asia/Kolkata", "kathmandu": "Asia/Kathmandu", "dhaka": "Asia/Dhaka",
    "bangkok": "Asia/Bangkok", "thailand": "Asia/Bangkok", "jakarta": "Asia/Jakarta",
    "indonesia": "Asia/Jakarta", "singapore": "Asia/Singapore",
    "kuala lumpur": "Asia/Kuala_Lumpur", "malaysia": "Asia/Kuala_Lumpur",
    "hanoi": "Asia/Bangkok", "ho chi minh city": "Asia/Ho_Chi_Minh",
    "vietnam": "Asia/Ho_Chi_Minh", "manila": "Asia/Manila", "philippines": "Asia/Manila",
    "hong kong": "Asia/Hong_Kong", "beijing": "Asia/Shanghai", "shanghai": "Asia/Shanghai",
    "china": "Asia/Shanghai", "taipei": "Asia/Taipei", "taiwan": "Asia/Taipei",
    "seoul": "Asia/Seoul", "south korea": "Asia/Seoul", "korea": "Asia/Seoul",
    "tokyo": "Asia/Tokyo", "osaka": "Asia/Tokyo", "japan": "Asia/Tokyo",
    "sydney": "Australia/Sydney", "melbourne": "Australia/Melbourne",
    "brisbane": "Australia/Brisbane", "perth": "Australia/Perth",
    "adelaide": "Australia/Adelaide", "australia": "Australia/Sydney",
    "auckland": "Pacific/Auckland", "wellington": "Pacific/Auckland",
    "new zealand": "Pacific/Auckland",
    # Zones by their usual names
    "utc": "UTC", "gmt": "Etc/GMT", "greenwich": "Etc/GMT",
    "eastern time": "America/New_York", "central time": "America/Chicago",
    "mountain time": "America/Denver", "pacific time": "America/Los_Angeles",
}


def _normalize(text: str) -> str:
    text = text.strip().lower()
    text = re.sub(r"^(?:in|at)\s+", "", text)
    text = re.sub(r"^the\s+", "", text)
    text = re.sub(r"[?!.,;:]+$", "", text)
    return re.sub(r"\s+", " ", text).strip()


@lru_cache(maxsize=1)
def _iana_cities() -> dict[str, str]:
    """The last part of every IANA zone ("lisbon" -> Europe/Lisbon), for places not listed."""
    cities: dict[str, str] = {}
    for zone in zoneinfo.available_timezones():
        if "/" not in zone or zone.startswith(("Etc/", "SystemV/", "US/")):
            continue
        cities.setdefault(zone.rsplit("/", 1)[1].replace("_", " ").lower(), zone)
    return cities


def zone_for_place(place: str) -> str | None:
    """The IANA zone of a place, or None when it is unknown.

    Tries the table, an IANA name ("Europe/Paris"), the city part of IANA names,
    then a close spelling of a listed place ("tokio" -> Tokyo).
    """
    key = _normalize(place)
    if not key:
        return None
    if key in PLACE_ZONES:
        return PLACE_ZONES[key]
    if "," in key:  # "Paris, France", "Austin, Texas"
        for part in (p.strip() for p in key.split(",")):
            if part in PLACE_ZONES:
                return PLACE_ZONES[part]
    for zone in zoneinfo.available_timezones():
        if zone.lower() == key.replace(" ", "_"):
            return zone
    if key in _iana_cities():
        return _iana_cities()[key]
    match = process.extractOne(key, list(PLACE_ZONES), scorer=fuzz.ratio, score_cutoff=85)
    return PLACE_ZONES[match[0]] if match else None
