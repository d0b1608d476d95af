export { peerTls, PEER_TLS_HOSTS, type PeerTls } from "./tls";
export {
  makeServiceAccount, makeApnsKey, makeApnsDeviceToken, makeFcmToken, makeVapidKeys, makeWebPushSubscription,
  type TestServiceAccount, type TestApnsKey, type TestWebPushSubscription,
} from "./credentials";
export { decodeJwt, verifyJwtSignature, p256PublicKeyFromRaw, type DecodedJwt } from "./jwt";
export { startFcmPeer, type FcmPeer, type FcmPeerOptions, type FcmReceived, type FcmErrorCode, type FcmPeerStats } from "./fcm-peer";
export { startApnsPeer, type ApnsPeer, type ApnsPeerOptions, type ApnsReceived, type ApnsEnvironment, type ApnsPeerStats } from "./apns-peer";
export { startH2Server, type H2Server, type H2ServerOptions, type H2Request, type H2Response } from "./h2/server";
export { startWebPushPeer, type WebPushPeer, type WebPushPeerOptions, type WebPushReceived, type WebPushPeerStats } from "./webpush-peer";
export { decryptAes128gcm, EceError } from "./ece";
export { startBtcpayPeer, type BtcpayPeer, type BtcpayPeerOptions, type PeerInvoice, type PeerWebhook, type PeerCurrency } from "./btcpay-peer"; export { startSmtpPeer, type SmtpPeer, type ReceivedMail } from "./smtp";
export { startApp, waitHealthy, freePort, startNats, hasNatsServer, call, ROOT, type Child } from "./procs";
