"""Named models: the recipes that make them (``recipes.py``), the cache that holds them
(``cache.py``), building one from its recipe (``build.py``) and loading one by name, built on first
use (``store.py``)."""
from structperc.models.recipes import RECIPES, Recipe, recipe_of
from structperc.models.store import is_model_name, list_models, load_named, model_path

__all__ = ["RECIPES", "Recipe", "recipe_of", "is_model_name", "list_models", "load_named", "model_path"]
