import Joi from 'joi';

/** The file the waker writes into a persona folder when it gives the persona a proxy identity. */
export const IDENTITY_FILE = 'proxy-identity.json';

/**
 * A persona's proxy identity: one residential proxy session and who the sites see behind it.
 * The waker writes it before it wakes the persona; the worker applies every field at browser
 * start (proxy, timezone, locale and Accept-Language, geolocation, WebRTC policy).
 */
export interface ProxyIdentity {
  proxy: {
    /** `http://host:port` of the proxy gateway. */
    server: string;
    /** The session's own credentials (the account name with the session in it). */
    username: string;
    password: string;
  };
  /** The proxy session id, as put in the username. */
  session: string;
  /** The exit address the GeoIP lookup saw through the session. */
  exit_ip: string;
  /** ISO 3166-1 alpha-2, upper case. */
  country: string;
  /** IANA time zone, e.g. `Europe/Berlin`. */
  timezone: string;
  /** BCP 47 locale, e.g. `de-DE`. */
  locale: string;
  latitude: number;
  longitude: number;
  /** ISO 8601 time the identity was made. */
  created_at: string;
}

export const identitySchema = Joi.object<ProxyIdentity, true>({
  proxy: Joi.object({
    server: Joi.string()
      .uri({ scheme: ['http'] })
      .required(),
    username: Joi.string().required(),
    password: Joi.string().allow('').required(),
  }).required(),
  session: Joi.string().required(),
  exit_ip: Joi.string().ip({ cidr: 'forbidden' }).required(),
  country: Joi.string()
    .pattern(/^[A-Z]{2}$/)
    .required(),
  timezone: Joi.string()
    .pattern(/^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)*$/)
    .required(),
  locale: Joi.string()
    .pattern(/^[a-z]{2,3}(-[A-Z]{2})?$/)
    .required(),
  latitude: Joi.number().min(-90).max(90).required(),
  longitude: Joi.number().min(-180).max(180).required(),
  created_at: Joi.string().isoDate().required(),
})
  .unknown(false)
  .label('ProxyIdentity');
