// public entry of @pushstack/dispatcher; filled by its issue
export {};
