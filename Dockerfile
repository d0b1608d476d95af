# One image for every app; the compose service picks the app with its command.
FROM oven/bun:1.4
WORKDIR /srv
COPY package.json bun.lock bunfig.toml tsconfig.json ./
COPY apps ./apps
COPY libs ./libs
RUN bun install --frozen-lockfile --production
ENV DATA_DIR=/data
EXPOSE 3000
CMD ["bun", "run", "apps/main.ts"]
