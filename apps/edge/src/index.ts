// public entry of @pushstack/edge; filled by its issue
export {};
